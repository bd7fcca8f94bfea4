"""The identifiers a query writes and the lines that define them (text/naming.py), on real lines."""

from __future__ import annotations

from ctxtrio.text.naming import defined_name, defines_one_of, written_identifiers
from ctxtrio.text.query import query_terms


def test_a_query_writes_identifiers_of_more_than_one_part() -> None:
    """CamelCase and snake_case names, whole; a plain word is none (it may name nothing)."""
    assert written_identifiers(query_terms("How many threads does ThreadPoolExecutor use by default?")) == [
        "threadpoolexecutor"
    ]
    assert written_identifiers(query_terms("What is the default highWaterMark of a writable stream?")) == [
        "highwatermark"
    ]
    assert written_identifiers(query_terms("log_min_duration_statement zero")) == ["logmindurationstatement"]
    assert written_identifiers(query_terms("How do I stop a timer before it runs?")) == []
    assert written_identifiers(query_terms("breakpoint()")) == []


def test_a_line_defines_an_identifier_by_its_entry_or_term() -> None:
    """Lines of Node 18's stream.md and tls.md, PostgreSQL 15's runtime-config-resource and Python
    3.11's re.rst; a line that only mentions the name defines nothing."""
    assert defines_one_of("* `options` {Object}\n  * `highWaterMark` {number} Buffer level when", ["highwatermark"])
    assert defines_one_of("  * `rejectUnauthorized` {boolean} If not `false`, the server", ["rejectunauthorized"])
    assert defines_one_of("work_mem (integer)\nSets the base maximum amount of memory", ["workmem"])
    assert defines_one_of(".. data:: X\n          VERBOSE", ["verbose"])
    assert defines_one_of("### `stream.getDefaultHighWaterMark(objectMode)`", ["getdefaulthighwatermark"])
    assert not defines_one_of("The amount of data buffered depends on the `highWaterMark` option", ["highwatermark"])
    assert not defines_one_of("Note that work_mem is the base amount.", ["workmem"])
    assert not defines_one_of("* `writableHighWaterMark` {number} Sets `highWaterMark`", ["highwatermark"])


def test_a_c_api_entry_defines_what_it_declares_not_its_type() -> None:
    """Entries of Python 3.11's C API docs (c-api/refcounting, list, unicode, module, typeobj, buffer, init, gcsupport):
    the name after the return type, ``*`` and ``const``/``struct``, a function pointer's ``(*name)``, a
    struct's member; the type defines nothing (each was ``void``, ``PyObject``, ``char``, ``int``)."""
    assert defined_name(".. c:function:: void Py_INCREF(PyObject *o)") == "Py_INCREF"
    assert defined_name(".. c:function:: PyObject* PyList_New(Py_ssize_t len)") == "PyList_New"
    assert defined_name(".. c:function:: const char* PyUnicode_AsUTF8(PyObject *unicode)") == "PyUnicode_AsUTF8"
    assert defined_name(".. c:function:: PyModuleDef* PyModule_GetDef(PyObject *module)") == "PyModule_GetDef"
    assert defined_name(".. c:member:: const char* PyTypeObject.tp_name") == "PyTypeObject.tp_name"
    assert defined_name("   .. c:member:: void *buf") == "buf"
    assert defined_name(".. c:var:: int Py_BytesWarningFlag") == "Py_BytesWarningFlag"
    assert defined_name(".. c:type:: int (*visitproc)(PyObject *object, void *arg)") == "visitproc"
    assert defined_name(".. c:macro:: Py_BEGIN_ALLOW_THREADS") == "Py_BEGIN_ALLOW_THREADS"
    assert defines_one_of(".. c:function:: void Py_INCREF(PyObject *o)\n\n   Increment the", ["pyincref"])
    assert defines_one_of(".. c:member:: const char* PyTypeObject.tp_name", ["tpname"])
    assert not defines_one_of(".. c:function:: PyObject* PyList_New(Py_ssize_t len)", ["pyobject"])
    assert not defines_one_of("   See also :c:func:`Py_INCREF`.", ["pyincref"])
