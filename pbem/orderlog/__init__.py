"""The order log: games as definitions plus entries, replayed, recorded, verified.

Pure like the rules layer below it (no database, no mail): the service reads
the log from the store and hands it here as data.
"""
