"""Plans of experiments: which ordinary runs make one (the variants and their run
configurations) and which of them are stored, as data. experiments/ runs them; the read
models read them without importing what runs work."""
