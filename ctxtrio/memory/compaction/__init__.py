"""Compaction: the plan and the summary record (:mod:`.plan`), finishing a stand-in once the LLM summary is done (:mod:`.finishing`), the slice file that keeps its steps (:mod:`.slices`).

Imports the state and sessions rooms.
"""
