"""What each exporter writes and when: the one table per metric source (``table``), and what a stated version,
flag set and scrape path make of it (``availability``)."""
