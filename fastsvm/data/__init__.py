"""Data files shipped with fastsvm: the a9a (UCI Adult) train/test split, bzip2-compressed LIBSVM text."""
