"""Teaching: the notebooks' widgets, the build-it checks of the student's own code, the
proposer comparison. Imports the subject (the top-level modules), never assess/ or tools/.
"""
