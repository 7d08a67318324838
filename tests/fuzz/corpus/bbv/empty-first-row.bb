T
