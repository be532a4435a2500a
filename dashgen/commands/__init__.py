"""Click command modules that the dashgen CLI wires in (one module per command)."""
