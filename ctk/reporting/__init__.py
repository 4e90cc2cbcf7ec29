"""Reports of a run: conformance.json / conformance.html, JUnit properties, comparison, requirements doc.

API for the pytest plugin (see each module's docstring)::

    from ctk.reporting import RunReport, write_conformance, attach_verdict, add_junit_statistics

    report = RunReport.begin(target_url, name=None, options={...})   # URL userinfo / secret options redacted
    report.set_server_info(dict); report.set_discovery(discovery)    # ctk.client Discovery or a dict
    report.add(verdict, nodeid, duration, outcome=None)              # per verdict
    attach_verdict(item, verdict)                                    # JUnit <property> ctk.* on the testcase
    report.finish()
    write_conformance(report, "reports")                            # -> {"json": path, "html": path}
    add_junit_statistics(junit_path, report)                         # suite <properties> after pytest wrote it
"""

from ctk.reporting.conformance import write_conformance
from ctk.reporting.junit import add_junit_statistics, attach_verdict, record_verdict, verdict_properties
from ctk.reporting.model import STATUS_ORDER, Result, RunReport, worst

__all__ = ["RunReport", "Result", "STATUS_ORDER", "worst", "write_conformance", "add_junit_statistics",
           "attach_verdict", "record_verdict", "verdict_properties"]
