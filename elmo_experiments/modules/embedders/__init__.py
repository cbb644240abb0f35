"""Token embedders (one file each) and the stack that concatenates them."""
