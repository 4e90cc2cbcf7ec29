"""The tests of Iceberg's REST compatibility kit (RCK) that the kit's catalog-semantics family maps: the test
methods of ``CatalogTests`` and ``ViewCatalogTests`` (apache/iceberg ``core/src/test/java/org/apache/iceberg/
catalog/CatalogTests.java`` and ``.../view/ViewCatalogTests.java`` at 7f879b1), by name only.

These names are facts about another project, kept here so that ``docs/rck-coverage.md`` can be generated and
checked without a copy of that project: every name is either covered by a semantic check of the kit (its
``rck=`` names, ``ctk.checks.semantics``) or listed in ``NOT_OBSERVABLE`` with the reason it cannot be observed
over REST. ``tests/checks/semantics/test_rck_coverage.py`` fails when a name is neither, or when the page and the
registry disagree.
"""

from __future__ import annotations

CATALOG_TESTS: tuple[str, ...] = (
    "testCreateNamespace", "testCreateExistingNamespace", "testCreateNamespaceWithProperties",
    "testLoadNamespaceMetadata", "testSetNamespaceProperties", "testUpdateNamespaceProperties",
    "testUpdateAndSetNamespaceProperties", "testSetNamespacePropertiesNamespaceDoesNotExist",
    "testRemoveNamespaceProperties", "testRemoveNamespacePropertiesNamespaceDoesNotExist", "testDropNamespace",
    "testDropNonexistentNamespace", "testDropNonEmptyNamespace", "testDropNamespaceWithNestedNamespace",
    "testListNamespaces", "testListNestedNamespaces", "testNamespaceWithSlash", "testNamespaceWithDot",
    "testBasicCreateTable", "testTableNameWithSlash", "testTableNameWithDot",
    "testBasicCreateTableThatAlreadyExists", "testCompleteCreateTable", "testDefaultTableProperties",
    "testDefaultTablePropertiesCreateTransaction", "testDefaultTablePropertiesReplaceTransaction",
    "testOverrideTableProperties", "testOverrideTablePropertiesCreateTransaction",
    "testOverrideTablePropertiesReplaceTransaction", "testCreateTableWithDefaultColumnValue", "testLoadTable",
    "testCreateTableWithVariantColumn", "testCreateV2TableWithVariantColumnFails",
    "testAddVariantColumnToExistingTable", "testLoadTableWithNonExistingNamespace", "testLoadMetadataTable",
    "testLoadMissingTable", "testLoadTableWithMissingMetadataFile", "testRenameTable", "createTableInUniqueLocation",
    "dropAfterRenameDoesntCorruptTable", "testRenameTableMissingSourceTable", "renameTableNamespaceMissing",
    "testRenameTableDestinationTableAlreadyExists", "testDropTable", "testDropTableWithPurge",
    "testDropTableWithoutPurge", "testDropMissingTable", "testListTables", "listNamespacesWithEmptyNamespace",
    "testListNonExistingNamespace", "createAndDropEmptyNamespace", "namespacePropertiesOnEmptyNamespace",
    "listTablesInEmptyNamespace", "testUpdateTableSchema", "testUUIDValidation",
    "testUpdateTableSchemaServerSideRetry", "testUpdateTableSchemaConflict",
    "testUpdateTableSchemaAssignmentConflict", "testUpdateTableSchemaThenRevert", "testUpdateTableSpec",
    "testUpdateTableSpecServerSideRetry", "testUpdateTableSpecConflict", "testUpdateTableAssignmentSpecConflict",
    "testUpdateTableSpecThenRevert", "testRemoveUnusedSpec", "testRemoveUnusedSchemas", "testUpdateTableSortOrder",
    "testUpdateTableSortOrderServerSideRetry", "testUpdateTableOrderThenRevert", "testAppend",
    "testConcurrentAppendEmptyTable", "testConcurrentAppendNonEmptyTable", "testUpdateTransaction",
    "testCreateTransaction", "testCompleteCreateTransaction", "testCompleteCreateTransactionMultipleSchemas",
    "testCompleteCreateTransactionV2", "testConcurrentCreateTransaction", "testCreateOrReplaceTransactionCreate",
    "testCompleteCreateOrReplaceTransactionCreate", "testCreateOrReplaceReplaceTransactionReplace",
    "testCompleteCreateOrReplaceTransactionReplace", "testCreateOrReplaceTransactionConcurrentCreate",
    "testReplaceTransaction", "testCompleteReplaceTransaction", "testReplaceTransactionRequiresTableExists",
    "testReplaceTableKeepsSnapshotLog", "testConcurrentReplaceTransactions",
    "testConcurrentReplaceTransactionSchema", "testConcurrentReplaceTransactionSchema2",
    "testConcurrentReplaceTransactionSchemaConflict", "testConcurrentReplaceTransactionPartitionSpec",
    "testConcurrentReplaceTransactionPartitionSpec2", "testConcurrentReplaceTransactionPartitionSpecConflict",
    "testConcurrentReplaceTransactionSortOrder", "testConcurrentReplaceTransactionSortOrderConflict",
    "createTableTransaction", "replaceTableTransaction", "testMetadataFileLocationsRemovalAfterCommit",
    "tableCreationWithoutNamespace", "testRegisterTable", "testRegisterExistingTable",
    "testCatalogWithCustomMetricsReporter",
)

VIEW_CATALOG_TESTS: tuple[str, ...] = (
    "loadViewWithNonExistingNamespace", "loadViewThatAlreadyExistsAsTable", "loadTableThatAlreadyExistsAsView",
    "basicCreateView", "defaultViewProperties", "overrideViewProperties", "completeCreateView",
    "createViewWithCustomMetadataLocation", "createViewErrorCases", "createViewThatAlreadyExists",
    "createViewThatAlreadyExistsAsTable", "createTableThatAlreadyExistsAsView",
    "createTableViaTransactionThatAlreadyExistsAsView", "replaceTableViaTransactionThatAlreadyExistsAsView",
    "createOrReplaceTableViaTransactionThatAlreadyExistsAsView", "replaceViewThatAlreadyExistsAsTable",
    "createOrReplaceViewThatAlreadyExistsAsTable", "renameView", "renameViewUsingDifferentNamespace",
    "renameViewNamespaceMissing", "renameViewSourceMissing", "renameViewTargetAlreadyExistsAsView",
    "renameViewTargetAlreadyExistsAsTable", "renameTableTargetAlreadyExistsAsView", "listViews",
    "listViewsInEmptyNamespace", "listViewsAndTables", "createOrReplaceView", "replaceViewErrorCases",
    "updateViewProperties", "updateViewPropertiesErrorCases", "replaceViewVersion",
    "replaceViewVersionByUpdatingSQLForDialect", "replaceViewVersionErrorCases", "updateViewPropertiesConflict",
    "replaceViewVersionConflict", "createViewConflict", "replaceViewConflict", "createAndReplaceViewWithLocation",
    "updateViewLocation", "updateViewLocationConflict", "concurrentReplaceViewVersion", "testSqlForMultipleDialects",
    "testSqlForCaseInsensitive", "testSqlForInvalidArguments", "dropNonEmptyNamespace",
    "registerTableThatAlreadyExistsAsView", "registerView", "registerExistingView",
    "registerViewThatAlreadyExistsAsTable",
)


def qualified() -> list[str]:
    """Every test as ``Class.method``, CatalogTests first, in the order of the Java files."""
    return [f"CatalogTests.{n}" for n in CATALOG_TESTS] + [f"ViewCatalogTests.{n}" for n in VIEW_CATALOG_TESTS]


# What a REST catalog cannot show: the test checks the Java client (or a catalog implementation's own files),
# not what crosses the wire. Each reason says what the test checks and why no request can observe it.
NOT_OBSERVABLE: dict[str, str] = {
    "CatalogTests.testCatalogWithCustomMetricsReporter":
        "a metrics reporter configured in the Java client receives scan and commit reports; the reports the "
        "client posts (reportMetrics) carry no catalog behaviour to judge",
}
