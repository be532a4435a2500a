"""PromQL builders, one module per metric source, plus the selector vocabulary they share.

Every label name and job comes from the profile (S1); no builder hard-codes a size.
"""
