"""The release loop: export live -> rebuild -> diff and guard -> validate -> push -> read back -> record.

``plan`` is pure (a printable value); ``execute`` is the only part that writes to Grafana;
``ledger`` and ``backups`` keep the record outside Grafana, which keeps only 20 versions.
"""
