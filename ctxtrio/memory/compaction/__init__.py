"""Compaction: ``compact`` itself (:mod:`.compact`, a part of the session service), its plan and summary record (:mod:`.plan`), finishing a stand-in once the LLM summary is done (:mod:`.finishing`), the slice file that keeps its steps (:mod:`.slices`).

Imports the state and sessions rooms.
"""
