"""What each catalog-semantics check asserts, and the sentence that states it (issue 34, item 3).

Every condition of a semantic check that can give a fail or a deviation is one `Assertion`, with its source:

- ``spec``     the merged Iceberg REST OpenAPI document; ``where`` names the operation or schema, ``quote`` is its
               text verbatim ([..] marks an omission; ``tests/reporting/test_assertion_trace.py`` finds every
               quoted piece in the document when the document is at hand);
- ``rck``      a test of Iceberg's compatibility kit; ``where`` is ``CatalogTests.testX`` / ``ViewCatalogTests.x``
               (a name of ``ctk.core.rck``), ``quote`` the assertion of that test (apache/iceberg 7f879b1);
- ``kit-must`` the kit's own MUST, only where a client would lose data or misreport success; ``quote`` says how;
- ``facts``    ``shared/notes/iceberg-idempotency-facts.md``.

``grade`` says what the assertion can give: ``effect`` - the effect is wrong (acknowledged and not done, refused
yet changed): the requirement's level (``grading.Kind.NOT_DONE`` / ``REFUSED_CHANGED``); ``status`` - the effect
held, the status, error type or answer is not the documented one: the documents' level (``WRONG_STATUS``,
``LENIENT``, ``SERVER_ERROR``); ``note`` - informational only, in the verdict's details, never a finding (what no
source states, kept so a reader sees what was looked at).

The table is keyed by the check's name (`registry.SemanticCheck.name`); ``registry.assertions(check)`` reads it and
``ctk assertion-trace`` writes docs/assertion-trace.md from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctk.core.requirements import K_EFFECT, K_READ_BACK, K_REFUSED

SOURCES = ("spec", "rck", "kit-must", "facts", "none")
GRADES = ("effect", "status", "note")


@dataclass(frozen=True)
class Assertion:
    what: str           # the condition judged, in the words of the check's message
    source: str         # one of SOURCES
    where: str          # spec: operation / schema; rck: Class.test; kit-must: the rule; facts: the section
    quote: str          # the sentence that states it
    grade: str          # one of GRADES


def spec(what: str, where: str, quote: str, grade: str = "status") -> Assertion:
    return Assertion(what, "spec", where, quote, grade)


def rck(what: str, where: str, quote: str, grade: str = "status") -> Assertion:
    return Assertion(what, "rck", where, quote, grade)


def done(what: str) -> Assertion:
    """Acknowledged, so done: a client told "done" that reads otherwise loses data or misreports success."""
    return Assertion(what, "kit-must", "an acknowledged mutation has its effect", K_EFFECT.quote, "effect")


def unchanged(what: str) -> Assertion:
    """Refused, so nothing changed: a client told "failed" cleans up after a change that in fact happened."""
    return Assertion(what, "kit-must", "a refused mutation has no effect", K_REFUSED.quote, "effect")


def read_back(what: str) -> Assertion:
    return Assertion(what, "kit-must", "a read shows every acknowledged change", K_READ_BACK.quote, "effect")


def note(what: str, why: str) -> Assertion:
    """What no source states: looked at and reported in the verdict's details, never a finding."""
    return Assertion(what, "none", "", why, "note")


OLD_OBJECT = ("a create answered 2xx while the existing object still loads: the client was told its create (its "
              "schema, SQL or properties) happened, and reads the old object - a success that did not happen")
SERVER_ERROR = spec("a valid request is not answered 5xx on every try (sent 3 times)", "components/responses",
                    "ServerErrorResponse: A server-side problem that might not be addressable from the client side.")
NOT_ACCEPTED = ("a valid request the check rests on is accepted (a 4xx refusal: a deviation; a 5xx on every try: "
                "SERVER_ERROR; else inconclusive)")
BAD_REQUEST = ("Indicates a bad request error. It could be caused by an unexpected request body format or other "
               "forms of request validation failure")
CONFLICT_409 = "Conflict - CommitFailedException, one or more requirements failed. The client may retry."
UNKNOWN_400 = ("Server implementations are required to fail with a 400 status code if any unknown updates or "
               "requirements are received.")
NO_NS_404 = "Not Found - The namespace specified does not exist"


def _stale(what: str, test: str, quote: str) -> tuple[Assertion, ...]:
    """A commit whose requirement no longer holds: refused and nothing changed (kit MUST), 409 (spec, RCK)."""
    return (unchanged(f"{what}: not answered 2xx, and the metadata-location does not move"),
            spec(f"{what}: answered 409", "updateTable 409", CONFLICT_409),
            rck(f"{what}: CommitFailedException (the 409's type, where a client reads it)", test, quote))


def _retry(what: str, conflict_test: str, retry_test: str, retry_quote: str) -> tuple[Assertion, ...]:
    """The compatibility kit's "server side retry": the stale commit refused, the one with only its own
    requirements landing on the concurrent change, both kept."""
    return (*_stale(what, conflict_test, "isInstanceOf(CommitFailedException.class)"),
            rck("with only the requirements it needs the update lands on the concurrent change", retry_test,
                retry_quote),
            read_back("the next load shows the commit's metadata-location"),
            done("the update on top of the concurrent change keeps both"))


def _remove_unused(action: str, noun: str, role: str, test: str, quote: str, kept_for: str) -> tuple[Assertion, ...]:
    """remove-schemas / remove-partition-specs: the unused one removed, the one in use not."""
    return (rck(f"{action} of a {noun} no longer {role} lands", test, quote),
            done(f"after {action} [0] only the {role} {noun} is left"),
            Assertion(f"{action} of the {role} {noun} is not answered 2xx (a 2xx either drops the {noun} the table "
                      f"{kept_for} or reports a removal that did not happen)", "kit-must",
                      "an acknowledged mutation has its effect", K_EFFECT.quote, "effect"),
            note("that refusal is a 400", "no source names the status of this refusal: said in the verdict's "
                 "details"))


def _dropped(op: str, noun: str, summary: str, test: str, quote: str, exists_op: str, exists_404: str
             ) -> tuple[Assertion, ...]:
    """A plain drop: accepted, gone (load 404, not listed, exists 404), answered 204."""
    return (spec(NOT_ACCEPTED, op, summary),
            done(f"an acknowledged {op}: the {noun} is gone (load answers 404)"),
            rck("the same, in the compatibility kit's words", test, quote, "effect"),
            read_back(f"a dropped {noun} is no longer listed"),
            spec(f"{exists_op} answers 404 for a dropped {noun}", f"{exists_op} 404", exists_404),
            spec(f"{op} answers 204", f"{op} 204", "Success, no content"))


def _renamed(op: str, accepted: str, summary: str, moved: str, test: str, quote: str) -> tuple[Assertion, ...]:
    """A plain rename: accepted, the source gone and the target the same object, answered 204."""
    return (spec(accepted, op, summary),
            done(f"an acknowledged {op}: {moved}"),
            rck("the source is gone and the target is the same object", test, quote, "effect"),
            spec(f"{op} answers 204", f"{op} 204", "Success, no content"))


TRACE: dict[str, tuple[Assertion, ...]] = {
    # ---------------------------------------------------------------------------------------------- namespaces
    "create-namespace": (
        spec(NOT_ACCEPTED, "createNamespace", "Create a namespace, with an optional set of properties."),
        SERVER_ERROR,
        done("an acknowledged createNamespace: the namespace loads back (200)"),
        spec("loadNamespaceMetadata names the namespace created (GetNamespaceResponse.namespace, required)",
             "loadNamespaceMetadata 200", "Returns a namespace, as well as any properties stored on the namespace "
             "if namespace properties are supported by the server.", "effect"),
        spec("namespaceExists answers 204 for a namespace that exists", "namespaceExists 204",
             "Success, no content"),
        rck("listNamespaces (parent) lists the created namespace", "CatalogTests.testCreateNamespace",
            'assertThat(catalog.listNamespaces()).as("Catalog should have the created namespace").contains(NS)',
            "effect"),
        rck("listNamespaces items are namespaces (arrays of strings), never read as an empty list",
            "CatalogTests.testCreateNamespace",
            'assertThat(catalog.listNamespaces()).as("Catalog should have the created namespace").contains(NS)',
            "effect"),
        spec("createNamespace answers 200 (CreateNamespaceResponse)", "createNamespace 200",
             "Represents a successful call to create a namespace."),
    ),
    "create-existing-namespace": (
        unchanged("the existing namespace keeps its properties after a second create"),
        Assertion("a create of an existing namespace answered 2xx (the old namespace still loads)", "kit-must",
                  "a create answered with the old object", OLD_OBJECT, "effect"),
        spec("409 for a namespace that exists", "createNamespace 409", "Conflict - The namespace already exists"),
        rck("AlreadyExistsException (the 409's type, where a client reads it)",
            "CatalogTests.testCreateExistingNamespace", "isInstanceOf(AlreadyExistsException.class)"),
    ),
    "namespace-properties-at-create": (
        rck("loadNamespaceMetadata returns the properties given at create (where the catalog keeps namespace "
            "properties: capability namespace-properties)", "CatalogTests.testCreateNamespaceWithProperties",
            '.as("Create properties should be a subset of returned properties")', "effect"),
    ),
    "update-properties": (
        spec(NOT_ACCEPTED, "updateProperties", "Set and/or remove properties on a namespace."),
        done("acknowledged updates are set and removals removed (a=10, c=3, no b), as loadNamespaceMetadata shows"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testRemoveNamespaceProperties",
            '.as("Should not contain deleted property key")', "effect"),
        spec("the answer lists updated [a, c] and removed [b]", "UpdateNamespacePropertiesResponse",
             "List of property keys that were added or updated [..] List of properties that were removed"),
        spec("the answer's `missing` lists [ctk_never_set] where the catalog gives `missing` at all (absent, null "
             "or empty: a note - \"Server's do not need to implement this\")",
             "UpdateNamespacePropertiesResponse.missing",
             "List of properties requested for removal that were not found in the namespace's properties. "
             "Represents a partial success response. Server's do not need to implement this."),
    ),
    "missing-namespace": (
        Assertion("load, update properties, drop, list tables and create a table in a missing namespace create "
                  "nothing (refused, yet afterwards the namespace loads)", "kit-must",
                  "a refused mutation has no effect", K_REFUSED.quote, "effect"),
        spec("acknowledged and the missing namespace made (a non-strict catalog): lenient, the documents' level",
             "createTable 404", NO_NS_404),
        spec("404 for every operation on a missing namespace", "loadNamespaceMetadata / updateProperties / "
             "dropNamespace / listTables / createTable 404",
             "Not Found - Namespace not found [..] Not Found - Namespace to delete does not exist. [..] Not Found "
             "- The namespace specified does not exist"),
        rck("NoSuchNamespaceException (the 404's type, where a client reads it: createTable included)",
            "CatalogTests.tableCreationWithoutNamespace", "isInstanceOf(NoSuchNamespaceException.class)"),
        rck("dropNamespace of a missing namespace is a 404 (the client's dropNamespace returns false)",
            "CatalogTests.testDropNonexistentNamespace",
            '.as("Dropping a nonexistent namespace should return false").isFalse()'),
        spec("namespaceExists answers 404", "namespaceExists 404", "Not Found - Namespace not found"),
    ),
    "drop-empty-namespace": _dropped(
        "dropNamespace", "namespace", "Drop a namespace from the catalog. Namespace must be empty.",
        "CatalogTests.testDropNamespace",
        'assertThat(catalog.namespaceExists(NS)).as("Namespace should not exist").isFalse()', "namespaceExists",
        "Not Found - Namespace not found"),
    "drop-non-empty-namespace": (
        unchanged("a refused drop of a namespace holding a table, a view or a nested namespace drops nothing"),
        spec("acknowledged although not empty (what it held orphaned): lenient, the documents' level",
             "dropNamespace 409", "Not Empty - Namespace to delete is not empty."),
        spec("409 for a namespace that is not empty", "dropNamespace 409",
             "Not Empty - Namespace to delete is not empty."),
        rck("NamespaceNotEmptyException (the 409's type, where a client reads it), for a table",
            "CatalogTests.testDropNonEmptyNamespace", "isInstanceOf(NamespaceNotEmptyException.class)"),
        rck("the same for a nested namespace", "CatalogTests.testDropNamespaceWithNestedNamespace",
            "isInstanceOf(NamespaceNotEmptyException.class)"),
        rck("the same for a view", "ViewCatalogTests.dropNonEmptyNamespace",
            "isInstanceOf(NamespaceNotEmptyException.class)"),
    ),
    "list-namespaces": (
        rck("listNamespaces(parent) lists exactly the parent's children (not grandchildren, not other parents)",
            "CatalogTests.testListNestedNamespaces",
            '.as("Should include child1 and child2").hasSameElementsAs(ImmutableList.of(child1, child2))',
            "effect"),
        spec("the top level (no parent) lists the run's first level and no namespace of more than one level",
             "listNamespaces",
             "If `parent` is not provided, all top-level namespaces should be listed.", "effect"),
        rck("listed items are namespaces (arrays of strings)", "CatalogTests.testListNamespaces",
            '.as("Should include newdb_1").hasSameElementsAs(concat(starting, ns1))', "effect"),
        spec("404 for a parent that does not exist", "listNamespaces 404",
             "Not Found - Namespace provided in the `parent` query parameter is not found."),
        rck("NoSuchNamespaceException (the 404's type, where a client reads it)",
            "CatalogTests.testListNonExistingNamespace", "isInstanceOf(NoSuchNamespaceException.class)"),
    ),
    "namespace-names-with-dot-or-slash": (
        rck("a level holding '.' is created, loaded, listed by its exact name and dropped (load 404 after)",
            "CatalogTests.testNamespaceWithDot", "assertThat(catalog.listNamespaces()).contains(withDot)",
            "effect"),
        rck("the same for '/'", "CatalogTests.testNamespaceWithSlash",
            '.as("Dropping the namespace should succeed").isTrue()', "effect"),
    ),
    # -------------------------------------------------------------------------------------------------- tables
    "create-table": (
        spec(NOT_ACCEPTED, "createTable", "Create a table or start a create transaction, like atomic CTAS."),
        SERVER_ERROR,
        done("an acknowledged createTable: the table loads (200)"),
        rck("the loaded table has the requested schema", "CatalogTests.testBasicCreateTable",
            '.as("Schema should match expected ID assignment").isEqualTo(TABLE_SCHEMA.asStruct())', "effect"),
        rck("the loaded table has a location", "CatalogTests.testBasicCreateTable",
            'assertThat(table.location()).as("Should have a location").isNotNull()', "effect"),
        spec("the loaded metadata has a table-uuid, the one createTable answered", "TableMetadata",
             "table-uuid", "effect"),
        spec("createTable answers 200 with the table's metadata (LoadTableResult)", "createTable 200",
             "Table metadata result after creating a table"),
        spec("tableExists answers 204", "tableExists 204", "Success, no content"),
    ),
    "create-existing-table": (
        unchanged("a second create of an existing table leaves it as it was (table-uuid, schema, properties)"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testBasicCreateTableThatAlreadyExists",
            '.as("Schema should match original table schema")', "effect"),
        Assertion("a create of an existing table answered 2xx (the old table still loads)", "kit-must",
                  "a create answered with the old object", OLD_OBJECT, "effect"),
        spec("a create in a missing namespace acknowledged and the namespace or table made: lenient, the "
             "documents' level", "createTable 404", NO_NS_404),
        done("a create in a missing namespace acknowledged: the table loads"),
        unchanged("a refused create in a missing namespace does not make the namespace"),
        spec("409 for an existing table, 404 for a missing namespace", "createTable 409 / 404",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException / NoSuchNamespaceException (the type, where a client reads it)",
            "CatalogTests.tableCreationWithoutNamespace", "isInstanceOf(NoSuchNamespaceException.class)"),
    ),
    "complete-create-table": (
        spec(NOT_ACCEPTED + "; a 4xx for the requested location is retried without one (a catalog that places "
             "tables itself)", "createTable", "Create a table or start a create transaction, like atomic CTAS."),
        done("an acknowledged createTable: the table loads (200)"),
        rck("the partition spec and sort order are the requested ones, bound to the schema's field ids",
            "CatalogTests.testCompleteCreateTable", '.as("Should use requested partition spec").isEqualTo(TABLE_SPEC)',
            "effect"),
        rck("the properties given at create are kept (also those the Java client merged from table-default.* / "
            "table-override.*)", "CatalogTests.testDefaultTableProperties",
            '.as("Table properties should be a superset of the requested properties")', "effect"),
        rck("the table has a location", "CatalogTests.testCompleteCreateTable",
            'assertThat(table.location()).as("Should have a location").isNotNull()', "effect"),
        note("the table at the requested location", "the compatibility kit asserts only a location "
             "(overridesRequestedLocation); where the catalog put it is said in the verdict"),
    ),
    "transaction-properties": (
        spec(NOT_ACCEPTED, "createTable stage-create", "If `stage-create` is true, the table is not created, but "
             "table metadata is initialized and returned."),
        done("an acknowledged create transaction: the table loads with its properties"),
        rck("the properties of a create transaction are in the table",
            "CatalogTests.testDefaultTablePropertiesCreateTransaction", 'containsEntry("prop1", "val1")', "effect"),
        done("an acknowledged replace: the table loads with its schema, properties and table-uuid"),
        rck("the properties of a replace transaction are in the table",
            "CatalogTests.testOverrideTablePropertiesReplaceTransaction", '.containsEntry("override-key3", "catalog-override-key3")',
            "effect"),
    ),
    "create-table-default-values": (
        spec(NOT_ACCEPTED, "createTable", "Create a table or start a create transaction, like atomic CTAS."),
        done("an acknowledged createTable: the table loads (200)"),
        rck("the loaded schema keeps the column's initial-default and write-default",
            "CatalogTests.testCreateTableWithDefaultColumnValue",
            "assertThat(schemaWithDefault.asStruct()).isEqualTo(catalog.loadTable(TBL).schema().asStruct())",
            "effect"),
    ),
    "load-missing-table": (
        rck("loadTable of a missing table, in a missing namespace or of a metadata-table name finds nothing (no 2xx)",
            "CatalogTests.testLoadMissingTable", "isInstanceOf(NoSuchTableException.class)", "effect"),
        spec("404 for a missing table", "loadTable 404", "Not Found - NoSuchTableException, table to load does "
             "not exist"),
        rck("NoSuchTableException also in a missing namespace (NoSuchNamespaceException is what a Java client "
            "raises for that type)", "CatalogTests.testLoadTableWithNonExistingNamespace",
            "isInstanceOf(NoSuchTableException.class)"),
        rck("a metadata-table name answers a 404 the client falls back on, and the base table then loads",
            "CatalogTests.testLoadMetadataTable", "assertThat(table).isInstanceOf(FilesTable.class)"),
        spec("tableExists of a missing table answers 404", "tableExists 404",
             "Not Found - NoSuchTableException, Table not found"),
    ),
    "load-missing-metadata-file": (
        rck("loadTable of a table whose metadata file is gone is refused with a 4xx, not 5xx",
            "CatalogTests.testLoadTableWithMissingMetadataFile", "isInstanceOf(NotFoundException.class)",
            "effect"),
        rck("404 (NotFoundException or NoSuchTableException)", "CatalogTests.testLoadTableWithMissingMetadataFile",
            "isInstanceOf(NotFoundException.class)"),
        note("a 200 (the catalog serves metadata from a copy of its own)", "a pass with a classification: no "
             "client loses anything"),
    ),
    "rename-table": _renamed(
        "renameTable", NOT_ACCEPTED, "Rename a table from one identifier to another.",
        "the destination loads the same table (table-uuid) and the source identifier is gone (404)",
        "CatalogTests.testRenameTable", '.as("Original table should no longer exist").isFalse()'),
    "drop-after-rename": (
        rck("purging a renamed table leaves the table created under its old name loading with its table-uuid",
            "CatalogTests.dropAfterRenameDoesntCorruptTable",
            '"After dropping the renamed table with PURGE, the recreated table with the original name (%s) must '
            'exist"', "effect"),
        done("the same: the client that dropped only the renamed table loses the other one's data otherwise"),
        SERVER_ERROR,
        spec(NOT_ACCEPTED, "dropTable", "Remove a table from the catalog"),
        rck("the metadata file of the table created under the old name is still there (where the kit reaches "
            "the storage)", "CatalogTests.dropAfterRenameDoesntCorruptTable",
            '.as("Table %s should remain unaffected by dropping %s", TABLE, RENAMED_TABLE)', "effect"),
    ),
    "rename-refused": (
        unchanged("a refused rename changes nothing (both tables keep their table-uuid, no target, no namespace)"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testRenameTableDestinationTableAlreadyExists",
            '.as("Source and destination table should remain distinct after failed rename")', "effect"),
        spec("404 for a missing source or target namespace, 409 for an existing target", "renameTable 404 / 409",
             "Not Found - NoSuchTableException, Table to rename does not exist - NoSuchNamespaceException, The "
             "target namespace of the new table identifier does not exist [..] Conflict - The target identifier "
             "to rename to already exists as a table or view"),
        rck("NoSuchTableException for a missing source", "CatalogTests.testRenameTableMissingSourceTable",
            "isInstanceOf(NoSuchTableException.class)"),
        rck("NoSuchNamespaceException for a missing target namespace", "CatalogTests.renameTableNamespaceMissing",
            "isInstanceOf(NoSuchNamespaceException.class)"),
        rck("AlreadyExistsException for an existing target", "CatalogTests.testRenameTableDestinationTableAlreadyExists",
            "isInstanceOf(AlreadyExistsException.class)"),
    ),
    "drop-table": _dropped(
        "dropTable", "table", "Remove a table from the catalog", "CatalogTests.testDropTable",
        '.as("Table should not exist after drop").isFalse()', "tableExists",
        "Not Found - NoSuchTableException, Table not found"),
    "drop-purge-and-missing": (
        spec(NOT_ACCEPTED, "dropTable", "Remove a table from the catalog"),
        done("an acknowledged purge-drop: the table is gone (load 404), not listed"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testDropTableWithPurge",
            '.as("Table should not exist after drop").isFalse()', "effect"),
        spec("204 for a purge-drop; 404 for a missing table", "dropTable 204 / 404",
             "Not Found - NoSuchTableException, Table to drop does not exist"),
        rck("dropping a missing table is a 404 (the client's dropTable returns false)",
            "CatalogTests.testDropMissingTable", '.as("Should not drop a table that does not exist").isFalse()'),
    ),
    "register-table": (
        done("an acknowledged registerTable: the table loads"),
        rck("the registered table loads with the registered metadata (table-uuid, schema, properties, snapshots)",
            "CatalogTests.testRegisterTable", '.as("Snapshots must match").isEqualTo(originalTable.snapshots())',
            "effect"),
        spec("registerTable answers 200 (LoadTableResult)", "registerTable 200",
             "Table metadata result when loading a table"),
    ),
    "register-refused": (
        unchanged("a refused registration registers nothing and changes nothing (the existing table keeps its "
                  "table-uuid and metadata-location; the missing file's name does not load)"),
        Assertion("a registration of a metadata file that does not exist is not answered 2xx: the client is "
                  "told a table was registered from a file that holds none", "kit-must",
                  "an acknowledged mutation has its effect", K_EFFECT.quote, "effect"),
        spec("409 for a name that is taken", "registerTable 409",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException (the 409's type, where a client reads it)", "CatalogTests.testRegisterExistingTable",
            "isInstanceOf(AlreadyExistsException.class)"),
        spec("a 4xx for a metadata file that does not exist", "components/responses",
             "BadRequestErrorResponse: " + BAD_REQUEST),
    ),
    "table-names-with-dot-or-slash": (
        rck("a table named with '.' is created, loaded with its schema, listed, dropped (load 404 after)",
            "CatalogTests.testTableNameWithDot", "assertThat(catalog.listTables(namespace)).contains(ident)",
            "effect"),
        rck("the same for '/'", "CatalogTests.testTableNameWithSlash",
            "assertThat(catalog.listTables(namespace)).contains(ident)", "effect"),
    ),
    "unique-location": (
        rck("a table created under a name another table was renamed away from gets a location of its own",
            "CatalogTests.createTableInUniqueLocation", '.as("Tables %s and %s have different location", TABLE, '
            'RENAMED_TABLE)', "effect"),
    ),
    # ------------------------------------------------------------------------------------------------- listing
    "list-tables": (
        rck("listTables lists exactly the namespace's tables (created ones, not dropped ones, not another "
            "namespace's, each once); a new namespace lists none", "CatalogTests.testListTables",
            '.as("Should not contain ns_1.table_1 after drop").containsExactlyInAnyOrder(ns1Table2)', "effect"),
        read_back("the same: a listing that misses an acknowledged create or shows a dropped table"),
        spec("404 for the tables of a missing namespace", "listTables 404", NO_NS_404),
        rck("NoSuchNamespaceException (the 404's type, where a client reads it)",
            "CatalogTests.testListNonExistingNamespace", "isInstanceOf(NoSuchNamespaceException.class)"),
    ),
    "pagination": (
        spec("no page longer than pageSize", "components/parameters/page-size",
             "For servers that support pagination, this signals an upper bound of the number of results that a "
             "client will receive.", "effect"),
        spec("every item exactly once across the pages (the set the listing without pageSize gives)",
             "components/schemas/PageToken", "the value of `next-page-token` from each response must be used as "
             "the `pageToken` parameter value for the next request.", "effect"),
        spec("the last page ends the listing (no next-page-token after total + 2 pages)",
             "components/schemas/PageToken",
             "The server must return `null` value for the `next-page-token` in the last response.", "effect"),
    ),
    "list-views": (
        rck("listViews lists exactly the namespace's views (not its tables, not another namespace's, not dropped "
            "ones); listTables lists no views", "ViewCatalogTests.listViewsAndTables",
            "assertThat(catalog().listViews(ns)).containsExactly(viewIdentifier)", "effect"),
        read_back("the same: a listing that misses an acknowledged create or shows a dropped view"),
    ),
    # ----------------------------------------------------------------------------------------------- evolution
    "commit-read-back": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("an acknowledged commit is in the next load (the committed property)"),
        spec("a commit's answer carries the required `metadata-location` (named with the field; the effect held: "
             "what rests on the commit stays decided)", "updateTable 200", "The corresponding file location of "
             "table metadata must be returned in the metadata-location field.", "effect"),
        spec("the next loadTable answers `metadata-location`", "LoadTableResult",
             "The corresponding file location of table metadata should be returned in the `metadata-location` "
             "field, unless the metadata is not yet committed."),
        read_back("the next loadTable shows the metadata-location the commit answered"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testUpdateTableSchema",
            '.as("Loaded table should have expected schema")', "effect"),
    ),
    "transaction-read-back": (
        spec(NOT_ACCEPTED, "commitTransaction", "Commit updates to multiple tables in an atomic operation"),
        done("both tables of an acknowledged commitTransaction show their change"),
        spec("commitTransaction answers 204", "commitTransaction 204", "Success, no content"),
    ),
    "schema-update-and-revert": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("the current schema is the one committed, with the field ids given"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testUpdateTableSchema",
            '.as("Loaded table should have expected schema").isEqualTo(expected.asStruct())', "effect"),
        rck("set-current-schema back to the earlier schema id lands", "CatalogTests.testUpdateTableSchemaThenRevert",
            '.as("Loaded table should have expected schema").isEqualTo(TABLE_SCHEMA.asStruct())'),
        done("after the revert the earlier schema (id 0) is current"),
        read_back("the reverted-from schema stays in the table's schemas (the acknowledged add-schema is not "
                  "undone by a commit that did not ask it)"),
    ),
    "schema-conflicts": _stale("a schema update on a stale base (assert-current-schema-id, "
                               "assert-last-assigned-field-id)", "CatalogTests.testUpdateTableSchemaConflict",
                               "isInstanceOf(CommitFailedException.class)"),
    "schema-server-side-retry": _retry("a schema update asserting the stale default spec",
                                       "CatalogTests.testUpdateTableSchemaConflict",
                                       "CatalogTests.testUpdateTableSchemaServerSideRetry",
                                       '.as("Loaded table should have expected schema")'),
    "remove-unused-schemas": _remove_unused(
        "remove-schemas", "schema", "current", "CatalogTests.testRemoveUnusedSchemas",
        "assertThat(loaded.schemas().keySet()).containsExactlyInAnyOrder(loaded.currentSnapshot().schemaId())",
        "is read with"),
    "spec-update-and-revert": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("the default spec is the one committed"),
        rck("set-default-spec back to the earlier spec id lands", "CatalogTests.testUpdateTableSpecThenRevert",
            '.as("Loaded table should have expected spec").isEqualTo(TABLE_SPEC)'),
        done("after the revert the unpartitioned spec 0 is the default"),
    ),
    "spec-conflicts": _stale("a spec update on a stale base (assert-default-spec-id, "
                             "assert-last-assigned-partition-id)", "CatalogTests.testUpdateTableSpecConflict",
                             "isInstanceOf(CommitFailedException.class)"),
    "spec-server-side-retry": _retry("a spec update asserting the stale current schema",
                                     "CatalogTests.testUpdateTableSpecConflict",
                                     "CatalogTests.testUpdateTableSpecServerSideRetry",
                                     '.as("Loaded table should have expected spec")'),
    "remove-unused-spec": _remove_unused(
        "remove-partition-specs", "spec", "default", "CatalogTests.testRemoveUnusedSpec",
        "assertThat(loaded.specs().values()).containsExactlyInAnyOrder(current)", "writes with"),
    "sort-order-update-and-revert": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("the default sort order is the one committed"),
        rck("set-default-sort-order back to the unsorted order lands", "CatalogTests.testUpdateTableOrderThenRevert",
            '.as("Loaded table should have expected order").isEqualTo(TABLE_WRITE_ORDER)'),
        done("after the revert the unsorted order 0 is the default"),
        unchanged("a stale assert-default-sort-order-id is not answered 2xx and changes nothing"),
        spec("that stale commit answers 409", "updateTable 409", CONFLICT_409),
    ),
    "sort-order-server-side-retry": _retry("a sort order update asserting the stale current schema",
                                           "CatalogTests.testUpdateTableSchemaConflict",
                                           "CatalogTests.testUpdateTableSortOrderServerSideRetry",
                                           '.as("Loaded table should have expected order")'),
    "update-transaction": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("every update of one commit is loaded back (column, spec, set and removed properties)"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testUpdateTransaction",
            '.as("Loaded table should have expected spec").isEqualTo(expectedSpec.fields())', "effect"),
    ),
    "appends-and-refs": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("an acknowledged append is the current snapshot, main points at it, and it is logged"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testAppend", "assertFiles(table, FILE_A)",
            "effect"),
        *_stale("an append on a stale base (empty and non-empty; assert-ref-snapshot-id)",
                "CatalogTests.testConcurrentAppendNonEmptyTable",
                "assertFiles(catalog.loadTable(TABLE), FILE_A, FILE_B, FILE_C)"),
        rck("an append on the fresh base lands", "CatalogTests.testConcurrentAppendEmptyTable",
            "assertFiles(catalog.loadTable(TABLE), FILE_A, FILE_B)"),
        done("the retried append is current with the first as its parent"),
        done("a tag and a branch set by set-snapshot-ref load back; remove-snapshot-ref removes the tag only"),
        spec("set-snapshot-ref / remove-snapshot-ref are accepted (refused with the refs untouched: the documents' "
             "level)", "updateTable", "Commit updates to a table."),
    ),
    "uuid-validation": (
        *_stale("a commit asserting the dropped table's uuid", "CatalogTests.testUUIDValidation",
                "isInstanceOf(CommitFailedException.class)"),
        unchanged("a commit to a table that does not exist does not create it"),
        spec("a commit to a missing table answers 404", "updateTable 404",
             "Not Found - NoSuchTableException, table to load does not exist"),
    ),
    "metadata-log": (
        rck("after 3 commits the metadata files a client reaches (the log's and the current one) are 4",
            "CatalogTests.testMetadataFileLocationsRemovalAfterCommit", "assertThat(metadataFileLocations).hasSize(4)",
            "effect"),
        rck("with write.metadata.previous-versions-max 2 they are 3, on every later commit too",
            "CatalogTests.testMetadataFileLocationsRemovalAfterCommit",
            "assertThat(metadataFileLocations).hasSize(maxPreviousVersionsToKeep + 1)", "effect"),
        note("the log names exactly the previous files, oldest first, the latest kept", "the compatibility kit "
             "counts the files (ReachableFileUtil.metadataFileLocations), the spec's MetadataLog states no order: "
             "said in the verdict's details"),
    ),
    "unknown-update-or-requirement": (
        Assertion("a commit with an update action or requirement type the document does not define is not "
                  "answered 2xx, and the table is unchanged (no metadata-location move, no marker)", "kit-must",
                  "a commit answered 200 with part of it dropped", "A commit answered 200 with part of it silently "
                  "dropped tells the client a change happened that did not.", "effect"),
        spec("it is refused with 400", "updateTable", UNKNOWN_400),
        spec("BadRequestException (the 400's type, where a client reads it)", "updateTable 400",
             "BadRequestErrorResponse: " + BAD_REQUEST),
    ),
    # --------------------------------------------------------------------------------------------- transactions
    "create-transaction": (
        spec(NOT_ACCEPTED, "createTable stage-create", "If `stage-create` is true, the table is not created, but "
             "table metadata is initialized and returned."),
        spec("a staged create creates nothing until its commit (the table does not load); made early it is "
             "lenient, the documents' level: nothing acknowledged is missing", "createTable",
             "If `stage-create` is true, the table is not created"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testCompleteCreateTransaction",
            '.as("Table should not exist after createTransaction").isFalse()'),
        spec("the staged create committed with assert-create lands", "updateTable",
             "The `assert-create` requirement is used to ensure that the table was not created concurrently."),
        done("the committed table has the staged uuid, schema, properties and the transaction's updates"),
        rck("the same, in the compatibility kit's words", "CatalogTests.testCompleteCreateTransaction",
            '.as("Table properties should be a superset of the requested properties")', "effect"),
    ),
    "create-transaction-format-versions": (
        spec(NOT_ACCEPTED, "createTable stage-create", "If `stage-create` is true, the table is not created, but "
             "table metadata is initialized and returned."),
        rck("an acknowledged create transaction with format-version N makes a table of format version N; a "
            "refused one makes nothing", "CatalogTests.createTableTransaction",
            "assertThat(TableUtil.formatVersion(catalog().loadTable(TABLE))).isEqualTo(formatVersion)", "effect"),
        rck("the commit of a create transaction with format-version N (1, 2, 3 where supported) is accepted "
            "(refused and nothing made: the documents' level)", "CatalogTests.createTableTransaction",
            "assertThat(TableUtil.formatVersion(catalog().loadTable(TABLE))).isEqualTo(formatVersion)"),
    ),
    "concurrent-create-transaction": (
        spec(NOT_ACCEPTED, "createTable stage-create", "If `stage-create` is true, the table is not created, but "
             "table metadata is initialized and returned."),
        unchanged("a create commit after another client created the table is not answered 2xx and leaves the "
                  "other table as it was (table-uuid)"),
        spec("it answers 409", "updateTable 409", CONFLICT_409),
        rck("the same, in the compatibility kit's words", "CatalogTests.testConcurrentCreateTransaction",
            '.as("Table schema should match concurrent create")'),
        unchanged("a refused create commit with assert-create and another requirement creates nothing"),
        done("an acknowledged create commit with assert-create and another requirement: the table loads"),
        note("assert-create with another requirement is refused with 400", "the spec says only that "
             "`assert-create` guards a create transaction, not that it must stand alone; the compatibility kit "
             "has no such test: said in the verdict's details"),
    ),
    "replace-transaction": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        done("the replaced table loads"),
        rck("a replace keeps the table-uuid and makes the new schema, spec, order and properties current",
            "CatalogTests.testCompleteReplaceTransaction", "assertUUIDsMatch(original, loaded)", "effect"),
        read_back("the earlier schema 0 is kept (a replace that did not ask it does not undo the table's "
                  "earlier schema)"),
    ),
    "replace-keeps-snapshot-log": (
        spec(NOT_ACCEPTED, "updateTable", "Commit updates to a table."),
        rck("a replace keeps the table-uuid and the snapshot log", "CatalogTests.testReplaceTableKeepsSnapshotLog",
            ".hasSize(2).containsExactly(snapshotBeforeReplace, snapshotAfterReplace)", "effect"),
        done("the replace's remove-snapshot-ref main is applied: no current snapshot is left"),
    ),
    "replace-missing-table": (
        unchanged("a replace of a table that does not exist creates nothing"),
        spec("404 for loading and replacing a table that does not exist", "loadTable / updateTable 404",
             "Not Found - NoSuchTableException, table to load does not exist"),
        rck("NoSuchTableException (the 404's type, where a client reads it)",
            "CatalogTests.testReplaceTransactionRequiresTableExists", "isInstanceOf(NoSuchTableException.class)"),
    ),
    "concurrent-replaces": (
        *_stale("a replace whose assert-last-assigned-field-id / -partition-id no longer holds",
                "CatalogTests.testConcurrentReplaceTransactionSchemaConflict",
                "isInstanceOf(CommitFailedException.class)"),
        done("the replace retried on the fresh base lands (its columns, the table-uuid)"),
        rck("two replaces that assert nothing of the order both land, the later order current",
            "CatalogTests.testConcurrentReplaceTransactionSortOrder",
            'assertThat(afterSecondReplace.sortOrder().isUnsorted()).as("Table should be unsorted").isTrue()',
            "effect"),
        spec("a replace with a new spec is accepted", "updateTable", "Commit updates to a table.", "effect"),
    ),
    # -------------------------------------------------------------------------------------------------- views
    "create-view": (
        spec(NOT_ACCEPTED, "createView", "Create a view in the given namespace."),
        SERVER_ERROR,
        done("an acknowledged createView: the view loads back (200 with its metadata)"),
        rck("the created view loads with the version, schema and SQL it was created with, one version logged once "
            "(view-uuid the one answered)", "ViewCatalogTests.basicCreateView",
            "assertThat(view.versions()).hasSize(1).containsExactly(view.currentVersion())", "effect"),
        spec("viewExists answers 204 for a view that exists", "viewExists 204", "Success, no content"),
        spec("createView answers 200 (LoadViewResult)", "createView 200", "View metadata result when loading a view"),
    ),
    "complete-create-view": (
        done("an acknowledged createView: the view loads back"),
        rck("two dialects' SQL, the properties, default catalog and namespace, the schema, one version",
            "ViewCatalogTests.completeCreateView",
            'assertThat(view.properties()).containsEntry("prop1", "val1").containsEntry("prop2", "val2")',
            "effect"),
        rck("the first version is version 1 on schema 0", "ViewCatalogTests.completeCreateView",
            "assertThat(view.schema().schemaId()).isEqualTo(0)"),
        note("the view at the requested location", "overridesRequestedLocation: a catalog may place the view "
             "itself; where it put it is said in the verdict"),
    ),
    "view-properties-at-create": (
        rck("the properties a view is created with load back (view-default.* / view-override.* are merged by the "
            "Java client)", "ViewCatalogTests.defaultViewProperties",
            'containsEntry("key2", "catalog-overridden-key2")', "effect"),
    ),
    "view-custom-metadata-location": (
        done("an acknowledged createView: the view loads back"),
        rck("the view keeps its write.metadata.path property", "ViewCatalogTests.createViewWithCustomMetadataLocation",
            'assertThat(view.properties()).containsEntry("write.metadata.path", customLocation)', "effect"),
        rck("the view's metadata file is written under write.metadata.path",
            "ViewCatalogTests.createViewWithCustomMetadataLocation", ".isNotNull().startsWith(customLocation)"),
    ),
    "create-view-errors": (
        unchanged("refused creates create nothing"),
        spec("a create in a missing namespace acknowledged and the namespace or view made: lenient", "createView 404",
             NO_NS_404),
        done("a create in a missing namespace acknowledged: the view loads"),
        unchanged("a refused create in a missing namespace does not make the namespace"),
        spec("a create without a schema, a default namespace or a dialect answers 400 (bodies the request schema "
             "forbids)", "createView 400", "BadRequestErrorResponse: " + BAD_REQUEST),
        rck("two queries for one dialect answer 400 IllegalArgumentException or BadRequestException",
            "ViewCatalogTests.createViewErrorCases", "isInstanceOf(IllegalArgumentException.class)"),
        note("queries for spark and SPARK in one version are refused", "no source says dialects compare "
             "case-insensitively on create (testSqlForCaseInsensitive only looks SQL up so, in the client): sent "
             "under a name of its own and said in the verdict's details"),
        spec("404 for a missing namespace", "createView 404", NO_NS_404),
    ),
    "create-existing-view": (
        unchanged("a second create leaves the existing view as it was (uuid, versions, schemas, properties)"),
        Assertion("a create of an existing view answered 2xx (the old view still loads)", "kit-must",
                  "a create answered with the old object", OLD_OBJECT, "effect"),
        spec("409 for a view that exists", "createView 409",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException (the 409's type, where a client reads it)",
            "ViewCatalogTests.createViewThatAlreadyExists", "isInstanceOf(AlreadyExistsException.class)"),
    ),
    "view-onto-table-name": (
        unchanged("view operations onto a table's name change neither the table nor the view, and make no view"),
        spec("409 for createView / registerView where a table exists", "createView 409",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException for those", "ViewCatalogTests.createViewThatAlreadyExistsAsTable",
            "isInstanceOf(AlreadyExistsException.class)"),
        spec("404 for replaceView, loadView and viewExists of a table's name", "loadView / replaceView 404",
             "Not Found - NoSuchViewException, view to load does not exist"),
        rck("NoSuchViewException for loadView of a table", "ViewCatalogTests.loadViewThatAlreadyExistsAsTable",
            "isInstanceOf(NoSuchViewException.class)"),
        spec("409 for renameView onto a table", "renameView 409",
             "Conflict - The target identifier to rename to already exists as a table or view"),
    ),
    "table-onto-view-name": (
        unchanged("table operations onto a view's name change neither the view nor any table, and make no table"),
        spec("409 for createTable, registerTable and renameTable onto a view's name", "createTable 409",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException for those", "ViewCatalogTests.createTableThatAlreadyExistsAsView",
            "isInstanceOf(AlreadyExistsException.class)"),
        rck("a staged create committed where a view now exists is refused (409)",
            "ViewCatalogTests.createTableViaTransactionThatAlreadyExistsAsView",
            "isInstanceOf(AlreadyExistsException.class)"),
        spec("404 for loadTable and tableExists of a view", "loadTable 404",
             "Not Found - NoSuchTableException, table to load does not exist"),
        rck("a replace commit to a view's name is refused (404 or 409)",
            "ViewCatalogTests.replaceTableViaTransactionThatAlreadyExistsAsView",
            "isInstanceOf(AlreadyExistsException.class)"),
    ),
    "rename-view": _renamed(
        "renameView", NOT_ACCEPTED, "Rename a view from one identifier to another.",
        "the source is gone (404) and the target loads the same view (uuid, versions, schemas, properties)",
        "ViewCatalogTests.renameView",
        ".usingRecursiveComparison().ignoringFieldsOfTypes(Schema.class).isEqualTo(original)"),
    "rename-view-across-namespaces": _renamed(
        "renameView", NOT_ACCEPTED + " (a catalog \"is not required to support\" a move across namespaces: its "
        "refusal is a deviation at the documents' level)",
        "It's valid to move a view across namespaces, but the server implementation is not required to support it.",
        "the source is gone (404) and the target, in the other namespace, loads the same view",
        "ViewCatalogTests.renameViewUsingDifferentNamespace",
        ".usingRecursiveComparison().ignoringFieldsOfTypes(Schema.class).isEqualTo(original)"),
    "rename-view-errors": (
        unchanged("refused renames change nothing"),
        spec("404 for a missing target namespace or source, 409 for an existing target", "renameView 404 / 409",
             "Not Found - NoSuchViewException, view to rename does not exist - NoSuchNamespaceException, The "
             "target namespace of the new identifier does not exist"),
        rck("NoSuchNamespaceException for a missing target namespace", "ViewCatalogTests.renameViewNamespaceMissing",
            "isInstanceOf(NoSuchNamespaceException.class)"),
        rck("NoSuchViewException for a missing source", "ViewCatalogTests.renameViewSourceMissing",
            "isInstanceOf(NoSuchViewException.class)"),
        rck("AlreadyExistsException for an existing target", "ViewCatalogTests.renameViewTargetAlreadyExistsAsView",
            "isInstanceOf(AlreadyExistsException.class)"),
    ),
    "drop-view": (
        done("an acknowledged dropView: the view is gone (loadView 404)"),
        rck("the same, in the compatibility kit's words", "ViewCatalogTests.basicCreateView",
            'assertThat(catalog().viewExists(identifier)).as("View should not exist").isFalse()', "effect"),
        spec("dropView 204; afterwards loadView and dropView 404, HEAD 404", "dropView 204 / 404",
             "Not Found - NoSuchViewException, view to drop does not exist"),
    ),
    "load-view-missing-namespace": (
        rck("a view in a namespace that does not exist does not load", "ViewCatalogTests.loadViewWithNonExistingNamespace",
            "isInstanceOf(NoSuchViewException.class)", "effect"),
        spec("404 for loadView (and viewExists)", "loadView 404",
             "Not Found - NoSuchViewException, view to load does not exist"),
        rck("NoSuchViewException (a Java client raises NoSuchNamespaceException for that type)",
            "ViewCatalogTests.loadViewWithNonExistingNamespace", "isInstanceOf(NoSuchViewException.class)"),
    ),
    "replace-view-version": (
        spec(NOT_ACCEPTED, "replaceView", "Commit updates to a view."),
        done("an acknowledged replaceView: the view loads back, with the metadata-location it answered"),
        rck("the new version is current on the added schema; the old version and the version-log are kept",
            "ViewCatalogTests.replaceViewVersion",
            ".hasSize(2).containsExactly(viewVersion, updatedView.currentVersion())", "effect"),
        rck("the new version is 2 on schema 1", "ViewCatalogTests.replaceViewVersion",
            "assertThat(updatedViewVersion.schemaId()).isEqualTo(1)"),
    ),
    "replace-view-sql-for-dialect": (
        spec(NOT_ACCEPTED, "replaceView", "Commit updates to a view."),
        rck("the new version with the updated SQL is current; two versions, both logged",
            "ViewCatalogTests.replaceViewVersionByUpdatingSQLForDialect",
            "assertThat(updatedView.currentVersion().representations()).hasSize(1).containsExactly(updatedSpark)",
            "effect"),
    ),
    "create-or-replace-view": (
        spec(NOT_ACCEPTED, "replaceView", "Commit updates to a view."),
        rck("a replace keeps the earlier properties, adds the new ones, makes the new version on the new schema "
            "current, the log [1, 2]", "ViewCatalogTests.createOrReplaceView",
            '.containsEntry("replacedProp1", "val1")', "effect"),
        note("the new version's summary says operation=replace", "no source requires an `operation` summary key "
             "(Java's ViewVersion.operation() is \"replace\" for every version id but 1): not judged"),
        note("the view at the requested location", "a catalog may override a requested location "
             "(overridesRequestedLocation): where it put it is said in the verdict"),
    ),
    "update-view-properties-and-location": (
        spec(NOT_ACCEPTED, "replaceView", "Commit updates to a view."),
        rck("set-properties is loaded back", "ViewCatalogTests.updateViewProperties",
            '.containsEntry("key1", "val1").containsEntry("key2", "val2")', "effect"),
        rck("a properties or location update leaves the versions and the version-log as they were",
            "ViewCatalogTests.updateViewProperties",
            "assertThat(updatedView.versions()).hasSize(1).containsExactly(viewVersion)", "effect"),
        rck("a location update is loaded back", "ViewCatalogTests.updateViewLocation",
            "assertThat(updatedView.location()).isEqualTo(updatedLocation)", "effect"),
    ),
    "concurrent-replace-view-version": (
        done("the view loads after two replaces"),
        done("the first acknowledged replace is kept"),
        rck("a second replace answered 200 is applied on top of the first: 3 versions, its own current",
            "ViewCatalogTests.concurrentReplaceViewVersion", "assertThat(updatedView.versions()).hasSize(3)",
            "effect"),
        rck("a second replace refused changes nothing: 2 versions, the first's current",
            "ViewCatalogTests.concurrentReplaceViewVersion", "assertThat(updatedView.versions()).hasSize(2)",
            "effect"),
        spec("the second replace answers 200 or 409", "replaceView 409",
             "Conflict - CommitFailedException. The client may retry."),
    ),
    "view-version-history-limit": (
        done("the view loads after two acknowledged replaces, the last replace's version current"),
        note("with version.history.num-entries=2 only the two newest versions are kept and the version-log names "
             "only kept versions", "neither the REST spec nor the compatibility kit states version expiry (the "
             "property belongs to the view spec, which is not a source of this family): said in the verdict's "
             "details"),
    ),
    "replace-view-errors": (
        unchanged("refused replaces change nothing (the view keeps its metadata-location; no view is made)"),
        spec("invalid view updates answer 400 (bodies the request schema forbids: no default namespace, a null "
             "property value, key or location)", "replaceView 400", "BadRequestErrorResponse: " + BAD_REQUEST),
        rck("a version with two queries for one dialect answers 400 (IllegalArgumentException or "
            "BadRequestException)", "ViewCatalogTests.replaceViewErrorCases",
            "isInstanceOf(IllegalArgumentException.class)"),
        Assertion("a version on a schema that does not exist is refused (judged at the documents' level: 400)",
                  "kit-must", "a view no client can read", "A view whose current version names a schema the view "
                  "does not have cannot be loaded by a client (Java's ViewMetadata refuses it): the client that "
                  "was told its replace happened loses the view.", "status"),
        spec("replacing a missing view answers 404", "replaceView 404",
             "Not Found - NoSuchViewException, view to load does not exist"),
        rck("NoSuchViewException for it", "ViewCatalogTests.replaceViewErrorCases",
            "isInstanceOf(NoSuchViewException.class)"),
    ),
    "replace-dropped-view": (
        unchanged("commits to a dropped view bring nothing back"),
        unchanged("a commit asserting the dropped view's uuid leaves the new view unchanged"),
        spec("404 for commits to a dropped view", "replaceView 404",
             "Not Found - NoSuchViewException, view to load does not exist"),
        rck("NoSuchViewException for them", "ViewCatalogTests.replaceViewConflict",
            "isInstanceOf(NoSuchViewException.class)"),
        spec("409 for a stale assert-view-uuid", "replaceView 409",
             "Conflict - CommitFailedException. The client may retry."),
    ),
    "register-view": (
        rck("registerView of a dropped view's metadata file (gc.enabled=false) is accepted",
            "ViewCatalogTests.registerView", "assertThat(registeredView).isNotNull()"),
        done("an acknowledged registerView: the view loads"),
        rck("the registered view is the one in the metadata file (same uuid, versions, schemas)",
            "ViewCatalogTests.registerView", "assertThat(registeredView.versions()).isEqualTo(originalView.versions())",
            "effect"),
        spec("registerView answers 200", "registerView 200", "View metadata result when loading a view"),
    ),
    "register-existing-view": (
        unchanged("registering onto an existing view leaves it as it was"),
        unchanged("a refused registerView of a missing file registers nothing"),
        Assertion("a registration of a metadata file that does not exist is not answered 2xx: the client is "
                  "told a view was registered from a file that holds none (graded as registerTable's)", "kit-must",
                  "an acknowledged mutation has its effect", K_EFFECT.quote, "effect"),
        spec("409 for an existing view", "registerView 409",
             "Conflict - The identifier already exists as a table or view"),
        rck("AlreadyExistsException (the 409's type, where a client reads it)",
            "ViewCatalogTests.registerExistingView", "isInstanceOf(AlreadyExistsException.class)"),
        spec("a 4xx for a metadata file that does not exist", "components/responses",
             "BadRequestErrorResponse: " + BAD_REQUEST),
    ),
    # -------------------------------------------------------------------------------------------------- types
    "variant-columns": (
        rck("a v3 table with variant columns (nested too) is created and loads back with them, format-version 3, "
            "distinct ids", "CatalogTests.testCreateTableWithVariantColumn",
            '.as("Variant columns should round-trip through the catalog")', "effect"),
        rck("a v2 table with a variant column is refused and not created",
            "CatalogTests.testCreateV2TableWithVariantColumnFails",
            '.as("Table should not have been created").isFalse()', "effect"),
        rck("that refusal is a 4xx (which 4xx no source names: 400 is not required)",
            "CatalogTests.testCreateV2TableWithVariantColumnFails",
            '.hasMessageContaining("variant is not supported until v3")'),
        rck("a variant column is added to a v3 table by add-schema", "CatalogTests.testAddVariantColumnToExistingTable",
            '.as("Added variant column should round-trip through the catalog")', "effect"),
    ),
}


# Where the level a check judges at and the level its source gives part (left as they are; each says why).
LEVEL_NOTES: tuple[tuple[str, str], ...] = (
    ("EVO-09", "updateTable's description says servers \"are required to fail with a 400 status code\" for an "
               "unknown update or requirement - a requirement without the RFC 2119 word; the status (400 rather than "
               "another 4xx) is judged at the documents' level (SHOULD), the refusal and no change at the kit's "
               "MUST."),
    ("LIST-02", "PageToken's text uses \"must\" (`next-page-token` null in the last response; every result in one "
                "response when `pageToken` is not set); the requirement rests on page-size's sentence, which has no "
                "RFC 2119 word (SHOULD)."),
    ("TXN-04, EVO-07", "a stale requirement answered as a success loses the other commit's update (OCC-01's MUST, "
                       "named as the root cause through details.stale_requirement_accepted); the requirements "
                       "themselves rest on the compatibility kit only and judge at SHOULD."),
    ("VIEW-07", "a view version on a schema the view does not have makes the view unloadable (the kit's MUST would "
                "apply), but the refusal is judged at the documents' level, as the other invalid updates."),
)


def trace_of(name: str) -> tuple[Assertion, ...]:
    """The assertions of the semantic check named ``name`` (empty: none declared)."""
    return TRACE.get(name, ())
