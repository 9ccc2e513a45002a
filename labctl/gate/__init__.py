"""The pure core of `labctl gate`: rows in, verdicts out; job records in, a streak out.

- spec: the `[[gates]]` config tables, validated (config errors name gate and key)
- metric: a score's column or JSON path, in PostgreSQL and PostgREST spelling
- query: the columns and filters a gate needs, shared by every source
- verdict: rows -> `verdict` per model × benchmark and `gate` per model (streamed)
- streak: job records -> `cycle` records and the `streak`
- run: wires a gate to its source (labctl.backends) and to --register
"""
