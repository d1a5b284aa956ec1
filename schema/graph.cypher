// memcore graph schema (Kuzu). One statement per `;`. Loaded by src/store/graph/kuzuGraphStore.ts.
CREATE NODE TABLE IF NOT EXISTS MemoryEntry(id STRING, core_id STRING, title STRING, entry_type STRING, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS CodeLocation(id STRING, codebase_id STRING, file_path STRING, symbol STRING, start_line INT64, end_line INT64, language STRING, PRIMARY KEY(id));
// Added after the first release: ALTER, not the CREATE above, so that new and older graphs have the same column order.
ALTER TABLE CodeLocation ADD IF NOT EXISTS fingerprint STRING DEFAULT '';
ALTER TABLE CodeLocation ADD IF NOT EXISTS kind STRING DEFAULT '';
ALTER TABLE CodeLocation ADD IF NOT EXISTS revision STRING DEFAULT '';
CREATE NODE TABLE IF NOT EXISTS GoldenPath(id STRING, name STRING, concept STRING, description STRING, PRIMARY KEY(id));
CREATE REL TABLE IF NOT EXISTS RELATED(FROM MemoryEntry TO MemoryEntry, weight DOUBLE, kind STRING);
CREATE REL TABLE IF NOT EXISTS DEPENDS_ON(FROM MemoryEntry TO MemoryEntry);
CREATE REL TABLE IF NOT EXISTS SUPERSEDES(FROM MemoryEntry TO MemoryEntry);
CREATE REL TABLE IF NOT EXISTS REFERENCES_CODE(FROM MemoryEntry TO CodeLocation, relevance DOUBLE);
CREATE REL TABLE IF NOT EXISTS IMPLEMENTS(FROM MemoryEntry TO GoldenPath);
CREATE REL TABLE IF NOT EXISTS PATH_STEP(FROM GoldenPath TO CodeLocation, step_order INT64, description STRING, key_concepts STRING[]);
// A code file's location to the location of a file it imports (import-code).
CREATE REL TABLE IF NOT EXISTS IMPORTS(FROM CodeLocation TO CodeLocation);
