"""One partition's data: the Tablet and its rowsets (a MemRowSet for now; DiskRowSets later)."""
