"""State: one session as columns (:mod:`.columns`), seen through the :class:`~.entries.Item` view, searched by BM25 (:mod:`.bm25`), kept in a snapshot (:mod:`.snapshot`). Pure, but for the snapshot and derived-file I/O.

:mod:`.base` names the columns the views read, so the views and the state import it, not each other. Imports nothing from the other rooms.
"""
