// iceberg-js's everyday round trip against a REST catalog; prints one JSON object of what it observed, which
// tests/clients/test_iceberg_js.py asserts on.
// Usage: node iceberg_js_round_trip.mjs ICEBERG_JS_ENTRY CATALOG_URL NS WAREHOUSE   (bearer token in CATALOG_TOKEN)
// iceberg-js asks /v1/config for the prefix when it is given a warehouse.
import { pathToFileURL } from 'node:url';

const [entry, baseUrl, nsName, warehouse] = process.argv.slice(2);
const auth = { type: 'bearer', token: process.env.CATALOG_TOKEN };
const { IcebergRestCatalog, IcebergError } = await import(pathToFileURL(entry).href);

const out = { steps: [] };
const step = (name, value) => { out.steps.push(name); out[name] = value; };
const failure = async (fn) => {
  try {
    await fn();
    return { raised: false };
  } catch (e) {
    if (!(e instanceof IcebergError)) throw e;
    return { raised: true, status: e.status, type: e.icebergType ?? null, message: e.message,
             conflict: e.isConflict(), notFound: e.isNotFound() };
  }
};

const catalog = new IcebergRestCatalog({ baseUrl, auth, warehouse });
const other = new IcebergRestCatalog({ baseUrl, auth, warehouse });   // a second writer
step('prefix', await catalog.resolvePrefix());
const ns = [nsName];
const sub = [nsName, 'sub'];
const t = { namespace: ns, name: 'events' };
const schema = {
  type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1],
  fields: [{ id: 1, name: 'id', type: 'long', required: true },
           { id: 2, name: 'kind', type: 'string', required: false }],
};

// namespaces
await catalog.createNamespace({ namespace: ns }, { properties: { owner: 'js' } });
await catalog.createNamespace({ namespace: sub });
step('children', (await catalog.listNamespaces({ parent: { namespace: ns } })).namespaces.map((n) => n.namespace));
step('properties', (await catalog.loadNamespaceMetadata({ namespace: ns })).properties);
step('updated', await catalog.updateNamespaceProperties({ namespace: ns },
                                                        { updates: { team: 'lane' }, removals: ['owner', 'absent'] }));
step('propertiesAfter', (await catalog.loadNamespaceMetadata({ namespace: ns })).properties);
step('nsExists', [await catalog.namespaceExists({ namespace: sub }), await catalog.namespaceExists({ namespace: [nsName, 'nope'] })]);
step('nsDuplicate', await failure(() => catalog.createNamespace({ namespace: ns })));
await catalog.createNamespaceIfNotExists({ namespace: ns });

// tables
const created = await catalog.createTableResult({ namespace: ns }, {
  name: 'events', schema,
  'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'kind', transform: 'identity' }] },
  'write-order': { 'order-id': 1, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
  properties: { 'format-version': '2' },
});
step('created', { location: created['metadata-location'], etag: created.etag,
                  spec: created.metadata['partition-specs'].map((s) => s.fields.map((f) => f.name)),
                  order: created.metadata['default-sort-order-id'] });
step('tables', (await catalog.listTables({ namespace: ns })).identifiers.map((i) => i.name));
step('tableExists', [await catalog.tableExists(t), await catalog.tableExists({ namespace: ns, name: 'nope' })]);
const loaded = await catalog.loadTableResult(t);
step('loaded', { location: loaded['metadata-location'], etag: loaded.etag, uuid: loaded.metadata['table-uuid'] });

// conditional load: the ETag names the version; unchanged -> 304 (null), changed -> the new metadata
step('conditionalUnchanged', await catalog.loadTableResult(t, { ifNoneMatch: loaded.etag }));
const committed = await catalog.updateTable(t, {
  requirements: [{ type: 'assert-table-uuid', uuid: loaded.metadata['table-uuid'] }],
  updates: [{ action: 'set-properties', updates: { 'commit.by': 'js' } }],
});
step('committed', { location: committed['metadata-location'], props: committed.metadata.properties });
const reloaded = await catalog.loadTableResult(t, { ifNoneMatch: loaded.etag });
step('conditionalChanged', reloaded && { location: reloaded['metadata-location'], etag: reloaded.etag,
                                         props: reloaded.metadata.properties });

// a stale commit: this writer read schema 0, the other one changed the schema since -> 409, then a retry on
// fresh metadata succeeds
const stale = await catalog.loadTable(t);
await other.updateTable(t, {
  requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
  updates: [{ action: 'add-schema', 'last-column-id': 3,
              schema: { ...schema, 'schema-id': 1, fields: [...schema.fields, { id: 3, name: 'note', type: 'string', required: false }] } },
            { action: 'set-current-schema', 'schema-id': -1 }],
});
const staleCommit = { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': stale['current-schema-id'] }],
                      updates: [{ action: 'set-properties', updates: { stale: 'yes' } }] };
step('staleCommit', await failure(() => catalog.updateTable(t, staleCommit)));
const fresh = await catalog.loadTable(t);
const retried = await catalog.updateTable(t, {
  requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': fresh['current-schema-id'] }],
  updates: [{ action: 'set-properties', updates: { stale: 'no' } }],
});
step('retried', { schemaId: retried.metadata['current-schema-id'], stale: retried.metadata.properties.stale,
                  columns: retried.metadata.schemas.find((s) => s['schema-id'] === retried.metadata['current-schema-id']).fields.map((f) => f.name) });
step('ifNotExists', (await catalog.createTableIfNotExists({ namespace: ns }, { name: 'events', schema }))['table-uuid']);
step('tableDuplicate', await failure(() => catalog.createTable({ namespace: ns }, { name: 'events', schema })));

// rename, drop, clean up
await catalog.renameTable({ source: t, destination: { namespace: sub, name: 'moved' } });
step('afterRename', { old: await catalog.tableExists(t), moved: (await catalog.listTables({ namespace: sub })).identifiers.map((i) => i.name) });
step('nsNotEmpty', await failure(() => catalog.dropNamespace({ namespace: sub })));
await catalog.dropTable({ namespace: sub, name: 'moved' }, { purge: true });
step('loadDropped', await failure(() => catalog.loadTable({ namespace: sub, name: 'moved' })));
await catalog.dropNamespace({ namespace: sub });
await catalog.dropNamespace({ namespace: ns });
step('nsGone', await catalog.namespaceExists({ namespace: ns }));

console.log(JSON.stringify(out));
