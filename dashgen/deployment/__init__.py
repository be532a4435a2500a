"""The deployment: profile (load + validate), topology and sizes. The only place sizes and label names live."""
