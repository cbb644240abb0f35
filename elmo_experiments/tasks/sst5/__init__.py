"""SST-5 (fine-grained sentiment): the sst reader and the bcn model.

reader.py, model.py; components.py registers them (the framework imports it).
"""
