"""The ctk pytest plugin (entry point ``pytest11: ctk``). Thin: the work is in ctk/plugin/.

Inert unless activated by ``--catalog-url``, ``--ctk`` or the ini key ``ctk_autorun = true``. When active
and no paths are given, it runs its built-in suites (ctk/suites) and scenario files (scenarios/ or
``--ctk-scenarios``) against the catalog, starting the embedded reference catalog if no URL is given.
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
from typing import Any, Generator

import pytest

from ctk.core.verdicts import Verdict, VerdictError
from ctk.plugin import exits, lifeline, outcomes, scheduling, served, traffic
from ctk.plugin.collection import (ScenarioFile, add_keywords, default_args, is_scenario_path, is_suite_item,
                                   select_requirements)
from ctk.plugin.fixtures import (  # noqa: F401 - fixtures registered by import
    ctk_client, ctk_context, ctk_discovery, ctk_namespace, ctk_openapi, ctk_session, ctk_target, lifetime_batch,
)
from ctk.plugin.options import CtkOptions, add_options, apply_workers
from ctk.plugin.reports import COLLECTOR_KEY, FinalSummary, VerdictCollector, run_judging
from ctk.plugin.session import CtkSession, worker_identity
from ctk.plugin.state import OPTIONS_KEY, SESSION_KEY, get_options, get_session

VERDICTS_KEY = pytest.StashKey[list]()
INTERRUPTS_KEY = pytest.StashKey[exits.Interrupts]()
REPORTS_PLUGIN = "ctk-reports-to-collector"
FINAL_SUMMARY_PLUGIN = "ctk-final-summary"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)   # with --ctk-fail-on, which ctk.plugin.exits reads


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    apply_workers(config)     # --workers N is -n N: set before pytest-xdist reads it
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ctk: a conformance check of the kit (returns Verdicts)")
    config.addinivalue_line("markers", "spark: drives a real Spark session through PySpark (slow; needs --ctk-spark)")
    options = CtkOptions.from_config(config)
    config.stash[OPTIONS_KEY] = options
    if not options.active:
        return
    exits.fail_on(config)   # a bad --ctk-fail-on is a usage error before anything starts
    config.stash[HYPOTHESIS_HOME_KEY] = _keep_hypothesis_database_with_reports(options.reports)
    interrupts = exits.Interrupts(forward=_xdist_controller(config))
    interrupts.install()
    config.stash[INTERRUPTS_KEY] = interrupts
    config.pluginmanager.register(lifeline.Lifeline(config, lambda: interrupts.received is not None), "ctk-lifeline")
    if options.known_gaps is not None:
        config.pluginmanager.register(_KnownGapIds(), "ctk-known-gap-ids")
    run_id, worker = worker_identity(config)
    config.stash[SESSION_KEY] = CtkSession(options, run_id=run_id, worker=worker)
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = default_args(options)
    if not hasattr(config, "workerinput"):
        config.stash[COLLECTOR_KEY] = VerdictCollector(options)
        config.pluginmanager.register(_ReportsToCollector(config), REPORTS_PLUGIN)
        config.pluginmanager.register(FinalSummary(config, config.stash[COLLECTOR_KEY]), FINAL_SUMMARY_PLUGIN)
        from ctk.plugin.progress import Progress

        config.pluginmanager.register(Progress(config), "ctk-progress")    # a line per phase on long runs
        if not getattr(config.option, "xmlpath", None):
            config.option.xmlpath = os.path.join(options.reports, "junit.xml")
        if config.pluginmanager.hasplugin("html") and not getattr(config.option, "htmlpath", None):
            config.option.htmlpath = os.path.join(options.reports, "report.html")
            config.option.self_contained_html = True


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Where --catalog-url was given with /v1 (or a trailing '/'): the base URL the kit tests instead."""
    options = get_options(config)
    given = config.getoption("ctk_catalog_url", default=None)
    if options is None or not options.active or not given or not options.catalog_url:
        return []
    if str(given).strip().rstrip("/") != options.catalog_url:
        return [f"ctk: --catalog-url {given} ends in /v1: the base URL tested is {options.catalog_url}"]
    return []


def pytest_collect_file(file_path, parent: pytest.Collector):
    options = get_options(parent.config)
    if options is None or not options.active:
        return None
    if is_scenario_path(file_path, options):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:   # pytest-xdist's hook, on the controller
    options = get_options(config)
    if options is None or not options.active:
        return None
    return scheduling.make_scheduler(config, log, spark=options.spark, db_link=bool(options.db_link))


def pytest_itemcollected(item: pytest.Item) -> None:
    """-k matches the requirement ids, endpoint and behaviour of the kit's items (ctk.plugin.collection)."""
    options = get_options(item.config)
    if options is not None and options.active:
        add_keywords(item)


class _KnownGapIds:
    """Registered with --ctk-known-gaps: its check ids held to every check collected, before -k deselects."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        options = get_options(config)
        if options is not None and options.active and options.known_gaps is not None:
            _check_known_gap_ids(config, items, options.known_gaps)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    options = get_options(config)
    if options is None or not options.active:
        return
    select_requirements(config, items, list(options.requirements))
    scheduling.order_items(items, spark=options.spark)
    has_timeout = config.pluginmanager.hasplugin("timeout")
    for item in items:
        if is_suite_item(item) and not item.get_closest_marker("ctk"):
            item.add_marker(pytest.mark.ctk)
        if has_timeout and item.get_closest_marker("ctk") and not item.get_closest_marker("timeout") \
                and not _timeout_asked(config):
            # no wall clock on a check: its budgets count requests and answers, each request has --ctk-timeout,
            # and a busy runner must get the verdict a quiet one gets (a 180 s backstop made one an ERROR,
            # issues 34 and 36). A limit the user sets (--timeout, a timeout mark) still applies; when it fires
            # the check is inconclusive, naming it (ctk.plugin.outcomes)
            item.add_marker(pytest.mark.timeout(0))


def _timeout_asked(config: pytest.Config) -> bool:
    """Whether the user gave pytest-timeout's --timeout on the command line (an ini value is the project's
    default for its own tests, not a limit asked for this run of the checks)."""
    return any(a == "--timeout" or a.startswith("--timeout=") for a in config.invocation_params.args)


def _check_known_gap_ids(config: pytest.Config, items: list[pytest.Item], gaps: Any) -> None:
    """An entry of --ctk-known-gaps naming no check of this kit is a usage error (exit 4, the line named). In one
    process pytest's UsageError; on an xdist worker (whose error would be a crash) the items are dropped and the
    problem goes to the controller in workeroutput, which ends the run with exit 4 (pytest_sessionfinish)."""
    from ctk.reporting.known_gaps import check_id, unknown_checks

    # the checks collected, and the verdicts judged over the whole run (their results name no item)
    problems = unknown_checks(gaps, [*(check_id(i.nodeid) for i in items), traffic.NODEID, served.NODEID])
    if not problems:
        return
    if not hasattr(config, "workerinput"):
        raise pytest.UsageError("ctk: " + "\nctk: ".join(problems))
    getattr(config, "workeroutput")[KNOWN_GAPS_PROBLEMS_KEY_NAME] = problems
    config.hook.pytest_deselected(items=list(items))
    items[:] = []


KNOWN_GAPS_PROBLEMS_KEY_NAME = "ctk_known_gaps_problems"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """With --ctk-db-link every ctk check runs in a check scope on the shared database link (scheduling.link_turns):
    a shared turn for its whole run where its client's requests do not bound its traffic
    (scheduling.whole_check_turn), else its requests take theirs."""
    options = get_options(item.config)
    turns = scheduling.link_turns(options.db_link) if options is not None and options.active else None
    if turns is None or item.get_closest_marker("ctk") is None:
        return (yield)
    with turns.check_scope(whole=scheduling.whole_check_turn(item.nodeid)):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """For ctk tests: pytest calls the check (its own pytest_pyfunc_call); this wrapper keeps what the check
    returned (or the error verdict of a crash) and maps its Verdict(s) to the test's outcome."""
    if pyfuncitem.get_closest_marker("ctk") is None:
        return (yield)
    session = get_session(pyfuncitem.config)
    if session is not None and session.started and session.skip_reason:
        pytest.skip(session.skip_reason)
    if session is not None and session.started and session.error:
        pytest.fail(f"target unusable: {session.error}", pytrace=False)
    call = outcomes.CheckCall(pyfuncitem, session)
    with call.around_the_check():
        result = yield
    _judge(pyfuncitem, session, call.result)
    return result


def _judge(pyfuncitem: pytest.Function, session: CtkSession | None, result: object) -> None:
    verdicts = outcomes.as_verdicts(result)
    if verdicts is None:
        if result is not None:
            warnings.warn(pytest.PytestReturnNotNoneWarning(
                f"ctk test {pyfuncitem.nodeid} returned {type(result).__name__}, not a Verdict"))
        return
    if session is not None and session.started and _transport_errors(verdicts):
        problem = session.recheck()
        if problem:
            pyfuncitem.stash[VERDICTS_KEY] = []
            pytest.fail(f"target unusable: {problem}", pytrace=False)
    if session is not None:
        for v in verdicts:
            _name_users_url(v, session)
    stored: list[dict[str, Any]] = []
    pyfuncitem.stash[VERDICTS_KEY] = stored
    try:
        outcomes.apply(verdicts, strict=_strict(pyfuncitem.config), item=pyfuncitem)
    finally:
        for v in verdicts:
            try:
                stored.append(v.to_dict())
            except (KeyError, TypeError):
                continue
            if session is not None and session.worker.startswith("gw"):   # which xdist worker decided it
                stored[-1]["worker"] = session.worker


def _name_users_url(verdict: Verdict, session: CtkSession) -> None:
    """Messages and recorded exchanges name the URL the user gave, not the internal interposer's port."""
    verdict.message = session.public(verdict.message or "")
    exchanges = []
    for ex in verdict.exchanges or []:
        if isinstance(ex, dict) and isinstance(ex.get("url"), str):
            ex = {**ex, "url": session.public(ex["url"])}
        exchanges.append(ex)
    verdict.exchanges = exchanges


def _strict(config: pytest.Config) -> bool:
    options = get_options(config)
    return bool(options and options.strict)


def _transport_errors(verdicts: list[Verdict]) -> bool:
    for v in verdicts:
        if v.status.value in ("fail", "inconclusive"):
            for ex in v.exchanges or []:
                err = (ex.get("error") if isinstance(ex, dict) else getattr(ex, "error", None)) or ""
                if err and any(w in err.lower() for w in ("timeout", "timed out", "refused", "connect")):
                    return True
    return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if call.when != "call":
        return
    if call.excinfo is not None and isinstance(call.excinfo.value, VerdictError):
        report = outcome.get_result()
        options = get_options(item.config)
        # the verdict without a plugin traceback; in brief when the run writes reports that hold its evidence
        report.longrepr = (short_failure if options is not None and options.active else failure_text)(
            str(call.excinfo.value))
    verdicts = item.stash.get(VERDICTS_KEY, None)
    if not verdicts:
        return
    report = outcome.get_result()
    report.ctk_verdicts = verdicts
    _known_gap_outcome(item, report, verdicts)
    session = get_session(item.config)
    if session is not None:
        info: dict[str, Any] = {"url": session.url, "server_info": dict(session.server_info)}
        try:
            from ctk.reporting.model import discovery_summary

            info["discovery"] = discovery_summary(session.discovery)
        except Exception:  # noqa: BLE001
            pass
        report.ctk_target = info


def _known_gap_outcome(item: pytest.Item, report: pytest.TestReport, verdicts: list[dict[str, Any]]) -> None:
    """--ctk-known-gaps: a test that failed only on known gaps is an expected failure (pytest's xfail: skipped in
    junit.xml with the reason), so it does not fail the run; the verdicts keep their status in the reports."""
    options = get_options(item.config)
    gaps = options.known_gaps if options is not None else None
    if gaps is None or not report.failed:
        return
    from ctk.reporting.known_gaps import check_id, item_covered

    reason = item_covered(gaps, check_id(item.nodeid), verdicts, strict=bool(options and options.strict))
    if reason is not None:
        report.outcome = "skipped"
        report.wasxfail = f"known gap ({gaps.path}): {reason}"


FAILURE_TEXT_LIMIT = 1200
SHORT_LINE = 240
SHORT_VERDICTS = 2


def short_failure(text: str) -> str:
    """A failing check for the terminal, junit.xml and report.html in a few lines: per failing verdict (at most
    SHORT_VERDICTS) its heading (requirement, level, status, endpoint, behaviour), what was expected and what
    happened (or its message's first line); the evidence (exchanges, details) is in conformance.html/json, and
    the kit's summary at the end of the output groups the failures by root cause."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    heads = [i for i, b in enumerate(blocks) if " (MUST) " in b.splitlines()[0] or " (SHOULD) " in b.splitlines()[0]
             or " (MAY) " in b.splitlines()[0]]
    out: list[str] = []
    for n, i in enumerate(heads[:SHORT_VERDICTS]):
        lines = blocks[i].splitlines()
        out.append(lines[0])
        body = "\n".join(blocks[i:heads[n + 1] if n + 1 < len(heads) else len(blocks)])
        picked = [ln for ln in body.splitlines() if ln.startswith(("message: expected:", "happened:"))]
        if not picked:
            picked = [ln for ln in lines if ln.startswith("message:")][:1]
        for ln in picked[:2]:
            ln = ln.removeprefix("message: ")
            out.append("  " + (ln if len(ln) <= SHORT_LINE else ln[:SHORT_LINE] + " ..."))
    if not out:
        return failure_text(text)
    if len(heads) > SHORT_VERDICTS:
        out.append(f"  ... and {len(heads) - SHORT_VERDICTS} more failing verdict(s) of this check")
    if "(deviation counted as a failure: --ctk-strict)" in text:
        out.append("  (deviation counted as a failure: --ctk-strict)")
    return "\n".join(out)


def failure_text(text: str, limit: int = FAILURE_TEXT_LIMIT) -> str:
    """A failing check's text for the terminal, junit.xml and report.html, cut to ``limit`` characters with a
    note: the full evidence (each exchange once, bodies capped) is in conformance.json/html."""
    if len(text) <= limit:
        return text
    return (text[:limit].rstrip() + f"\n… [cut: {len(text) - limit} more characters; every exchange of this check "
            "is in conformance.html / conformance.json]")


class _ReportsToCollector:
    """Registered with the config's plugin manager while a run collects verdicts (the controller, not an xdist
    worker): each test's call report goes to that config's collector (pytest_runtest_logreport is not given
    the config)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        collector = self.config.stash.get(COLLECTOR_KEY, None)
        if report.when == "call" and collector is not None:
            collector.add_report(report)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if _xdist_controller(session.config):
        _check_target_first(session.config)


def _xdist_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", None)) \
        and getattr(config.option, "dist", "no") != "no"


def _check_target_first(config: pytest.Config, items: list[pytest.Item] | None = None) -> None:
    """Before any check: is the target usable at all? If not, one error naming the cause, a report saying why
    and exit code 6, instead of every check failing the same way. Without xdist, once collection shows a ctk
    check will run (the session starts as it would for the first check); on the xdist controller before its
    workers start, with a trial session of its own (URL targets only: the embedded catalog is the kit's)."""
    collector: VerdictCollector | None = config.stash.get(COLLECTOR_KEY, None)
    session = get_session(config)
    if collector is None or session is None or config.option.collectonly:
        return
    if items is None:       # the xdist controller, at session start
        if not session.options.catalog_url:
            return
        from ctk.plugin.session import CtkSession

        trial = CtkSession(session.options, run_id=session.run_id, worker="preflight")
        try:
            trial.start()
            problem = trial.error
        finally:
            trial.stop()
            collector.cleanup_problems += list(trial.cleanup_problems)    # what the trial left is said too
    else:
        if not any(item.get_closest_marker("ctk") for item in items):
            return
        session.start()
        problem = session.error
        if problem and not session.skip_reason:
            session.stop()
    if session.skip_reason or not problem:
        return
    collector.unusable = problem
    line = f"ctk: the target is unusable, no check ran: {problem}"
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if items is None:       # pytest_sessionfinish will not run: write the report here
        written = collector.write(config.stash[OPTIONS_KEY].reports)
        lines = [f"report: {p}" for p in written]
    else:
        lines = []
    # pytest prints its "!!! _pytest.outcomes.Exit ... !!!" banner for the exit at its end: the kit's line comes
    # after it (at unconfigure), so that the last line says what happened and what to do
    if tr is not None:
        config.pluginmanager.register(_LastWord(line), "ctk-last-word")
    else:
        lines.insert(0, line)
    for text in lines:
        if tr is not None:
            tr.write_line(text, red=True)
        else:
            print(text, file=sys.stderr)
    pytest.exit(f"target unusable (exit {exits.EXIT_UNUSABLE_TARGET})", returncode=exits.EXIT_UNUSABLE_TARGET)


class _LastWord:
    """Writes one line after everything pytest writes at its end (its exit banner included)."""

    def __init__(self, line: str) -> None:
        self.line = line

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(self.line, red=True, bold=True)
        else:
            print(self.line, file=sys.stderr)


HYPOTHESIS_HOME_KEY = pytest.StashKey[Any]()


def _keep_hypothesis_database_with_reports(reports: str) -> Any:
    """The generated checks' hypothesis database in the kit's cache directory (ctk.plugin.caches), neither in
    the reports directory (reports only) nor as .hypothesis/ in the user's folder (HYPOTHESIS_STORAGE_DIRECTORY,
    when set, wins). Returns the previous setting, to restore. (``reports`` is kept for callers' signature.)"""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return None
    try:
        from hypothesis import configuration
    except ImportError:
        return None
    from ctk.plugin.caches import cache_dir

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(cache_dir("hypothesis"))
    return ("set", previous)


def pytest_collection_finish(session: pytest.Session) -> None:
    options = get_options(session.config)
    if options is not None and options.active:
        # what is in memory now (pytest, the kit, pyiceberg, hypothesis...) lives until the end: out of the
        # garbage collector's full passes, which otherwise walk it again and again (a third of the GC time)
        gc.freeze()
    if not hasattr(session.config, "workerinput") and not _xdist_controller(session.config):
        _check_target_first(session.config, list(session.items))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Before junitxml writes its file: build the run report and write conformance.json/html."""
    config = session.config
    collector: VerdictCollector | None = config.stash.get(COLLECTOR_KEY, None)
    if collector is None:
        own = get_session(config)
        if hasattr(config, "workerinput") and own is not None:   # an xdist worker: its traffic
            # xdist gives a worker's Config a `workeroutput` dict (sent to the controller); pytest does not declare it
            workeroutput: dict[str, object] = getattr(config, "workeroutput")
            workeroutput[traffic.KEY] = traffic.summarize(own, config.stash[OPTIONS_KEY].openapi_spec)
            workeroutput[served.KEY] = served.summarize(own)
            _stop_before_reports(config)
            workeroutput["ctk_cleanup_problems"] = list(own.cleanup_problems)
        return
    _add_all_traffic_verdict(session, collector)
    _add_claimed_served_verdict(session, collector)
    _stop_before_reports(config)
    interrupts = config.stash.get(INTERRUPTS_KEY, None)
    collector.interrupted = exitstatus == exits.EXIT_INTERRUPTED or bool(interrupts and interrupts.received)
    collector.selection = _selection(session)
    collector.judging = run_judging(config)
    own = get_session(config)
    if own is not None and own.cleanup_problems:
        collector.cleanup_problems += list(own.cleanup_problems)
    _sweep_after_workers(config, collector, own)
    if collector.usage_problems:     # the known-gaps file names a check this kit does not have (xdist workers)
        for problem in collector.usage_problems:
            sys.stderr.write(f"ERROR: ctk: {problem}\n")
        session.exitstatus = collector.exit_code = exits.EXIT_USAGE
        return
    collector.write(config.stash[OPTIONS_KEY].reports)
    code, hits, undecided = exits.decide(int(session.exitstatus), collector.report, exits.fail_on(config))
    collector.fail_on_hits = hits if code == exits.EXIT_MUST_BROKEN and session.exitstatus == exits.EXIT_OK else {}
    collector.undecided_musts = undecided
    session.exitstatus = code
    collector.exit_code = code


def _sweep_after_workers(config: pytest.Config, collector: VerdictCollector, own: Any) -> None:
    """The xdist controller, after an interrupt or a worker that did not hand back its cleanup's outcome: what
    the run's processes left is removed here, read back, and what stays is a cleanup problem (a worker stopped
    before its cleanup finished said nothing: a run stopped with Ctrl-C over a database link left its run
    namespace with 1579 tables and no cleanup problem, issue 34)."""
    life = config.pluginmanager.get_plugin("ctk-lifeline")
    if own is None or life is None or not getattr(life, "nodes", None) or not _xdist_controller(config):
        return
    unfinished = life.unfinished()
    if not unfinished and not collector.interrupted:
        return
    # interrupted: the user wants the run to end, so what stays is named (`ctk cleanup` removes it); a worker that
    # ended on its own without handing back its cleanup: what it left is removed here
    removed, problems = own.sweep([*life.run_ids(), own.run_id], remove=not collector.interrupted)
    if unfinished and (removed or problems):
        collector.cleanup_problems.append(
            f"workers {', '.join(unfinished)} stopped before their cleanup finished; the run's controller "
            + (f"removed what they left ({', '.join(removed)}, read back)" if removed else "looked for what they left")
            + (", and some stays (below)" if problems else ""))
    collector.cleanup_problems += [p for p in problems if p not in collector.cleanup_problems]


TRAFFIC_KEY = pytest.StashKey[list]()
CLAIMED_KEY = pytest.StashKey[list]()


def _keep_traffic_summary(node: Any) -> None:
    """xdist controller (from pytest_testnodedown): keep a worker's SCHEMA-01 and DISC-05 traffic summaries."""
    output = getattr(node, "workeroutput", None) or {}
    for key, stash in ((traffic.KEY, TRAFFIC_KEY), (served.KEY, CLAIMED_KEY)):
        if output.get(key):
            node.config.stash.setdefault(stash, []).append(output[key])


def _add_all_traffic_verdict(session: pytest.Session, collector: VerdictCollector) -> None:
    """Under xdist, when SCHEMA-01 ran: one more SCHEMA-01 verdict judging every worker's traffic."""
    summaries = session.config.stash.get(TRAFFIC_KEY, [])
    if not summaries or not any(d.get("requirement") == traffic.REQ for d, *_ in collector.results):
        return
    _add_run_verdict(session, collector, traffic.verdict(summaries), traffic.NODEID)


def _add_claimed_served_verdict(session: pytest.Session, collector: VerdictCollector) -> None:
    """DISC-05 over every process's traffic (the workers' summaries, and this process's own): on a whole run, or
    on a subset where a check was left resting on it (``blocked_by`` DISC-05) or an operation was not served."""
    summaries: list[dict[str, Any]] = [*session.config.stash.get(CLAIMED_KEY, [])]
    own = get_session(session.config)
    if own is not None and getattr(own, "client", None) is not None:
        summaries.append(served.summarize(own))
    blocked = any((d.get("details") or {}).get("blocked_by") == served.REQ for d, *_ in collector.results)
    if not summaries or not (blocked or any(s.get("unserved") for s in summaries) or not _selection(session)):
        return
    _add_run_verdict(session, collector, served.verdict(summaries), served.NODEID)


def _add_run_verdict(session: pytest.Session, collector: VerdictCollector, v: Verdict | None, nodeid: str) -> None:
    """One verdict judged over the whole run, added to its results (and to its exit status when failing)."""
    if v is None:
        return
    strict = _strict(session.config)
    failing = v.status.value == "fail" or (strict and v.status.value == "deviation")
    collector.results.append((v.to_dict(), nodeid, 0.0, "failed" if failing else "passed"))
    if failing and session.exitstatus == exits.EXIT_OK:
        session.exitstatus = exits.EXIT_MUST_BROKEN


def _stop_before_reports(config: pytest.Config) -> None:
    """Remove the run namespace now (the session fixture's teardown would come after the reports), so that
    the reports can list what stayed behind."""
    own = get_session(config)
    if own is not None and own.started:
        own.stop()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist: a worker ended; what its cleanup left behind and its SCHEMA-01 traffic summary go into the run's
    report."""
    _keep_traffic_summary(node)
    collector = node.config.stash.get(COLLECTOR_KEY, None)
    gap_problems = (getattr(node, "workeroutput", None) or {}).get(KNOWN_GAPS_PROBLEMS_KEY_NAME)
    if collector is not None and gap_problems:
        collector.usage_problems = list(dict.fromkeys([*collector.usage_problems, *gap_problems]))
    if collector is not None:
        collector.cleanup_problems += list((getattr(node, "workeroutput", None) or {}).get("ctk_cleanup_problems")
                                           or [])


def _selection(session: pytest.Session) -> dict[str, Any]:
    """What the user narrowed the run to (-k, -m, paths, deselected tests); empty for the whole kit."""
    config = session.config
    sel: dict[str, Any] = {}
    if getattr(config.option, "keyword", ""):
        sel["keyword"] = config.option.keyword
    if getattr(config.option, "markexpr", ""):
        sel["markers"] = config.option.markexpr
    options = get_options(config)
    if options is not None and options.requirements:
        sel["requirements"] = list(options.requirements)
    if config.args_source == pytest.Config.ArgsSource.ARGS and config.args:
        sel["paths"] = list(config.args)
    for flag in ("lf", "failedfirst", "stepwise", "exitfirst"):
        if getattr(config.option, flag, False):
            sel[flag] = True
    deselected = config.stash.get(DESELECTED_KEY, 0)
    if deselected:
        sel["deselected"] = deselected
    return sel


DESELECTED_KEY = pytest.StashKey[int]()


def pytest_deselected(items) -> None:
    if items and get_options(items[0].config) is not None:
        config = items[0].config
        config.stash[DESELECTED_KEY] = config.stash.get(DESELECTED_KEY, 0) + len(items)


def _add_junit_statistics(config: pytest.Config) -> None:
    collector: VerdictCollector | None = config.stash.get(COLLECTOR_KEY, None)
    xmlpath = getattr(config.option, "xmlpath", None)
    if collector is None or collector.report is None or not xmlpath:
        return
    try:
        from ctk.reporting.junit import finish_junit

        # the run's record (an unusable target: written even when junitxml wrote nothing)
        finish_junit(xmlpath, collector.record if collector.record is not None else collector.report)
    except Exception as exc:  # noqa: BLE001
        collector.errors.append(f"statistics not added to {xmlpath}: {type(exc).__name__}: {exc}")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After junitxml wrote its file (its pytest_sessionfinish): add the suite statistics."""
    _add_junit_statistics(config)
    interrupts = config.stash.get(INTERRUPTS_KEY, None)
    if interrupts is not None:
        interrupts.uninstall()
    home = config.stash.get(HYPOTHESIS_HOME_KEY, None)
    if home:
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(home[1])
    for name in (REPORTS_PLUGIN, FINAL_SUMMARY_PLUGIN, "ctk-known-gap-ids"):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


# The kit's summary is the end of the output: ctk.plugin.reports.FinalSummary (registered in pytest_configure)
# writes it after pytest's own statistics line.


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_html(report: pytest.TestReport, data: list[str]) -> None:
    """report.html (pytest-html): a skipped test's log is its reason ("unsupported: REPLAY-03: ..."), not the
    tuple pytest keeps for it, ``('<venv>/ctk/plugin/outcomes.py', 212, 'Skipped: ...')``."""
    import html

    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2]).removeprefix("Skipped: ")
        data[:] = [html.escape(reason) + "\n"] + data[1:] if data else [html.escape(reason) + "\n"]
