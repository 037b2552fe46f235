"""Tools around the course: the ``decodelab`` command, the lab launcher, training the bundled
pair, the model card and the benchmarks' commands.
"""
