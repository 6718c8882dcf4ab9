/* The learned extractor's text statistics (newscrawl/extractors/blockmodel/textstats.py), compiled.

   `counts` goes once over each block's characters and gives what `text_columns` counts with
   numpy and regular expressions: characters of each class (read from the same table of class
   bits), words as `str.split` finds them, sentence ends, and the lower-cased `\w+` tokens with
   their count and characters. `stop_shares` gives each block's share of function words.
   `textstats.py` uses them when this extension was built, else its numpy and regex code; the
   tests compare the two, column by column, on generated and real texts. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* The columns of `counts`, per text. */
enum {
    CHARS, SPACES, ALNUM, DIGITS, UPPER, ALPHA, CJK, BULLETS, /* as textstats._class_counts */
    WORDS, SENTENCES, TOKENS, TOKEN_CHARS, COLUMNS
};
enum { SPACE_BIT = 1 };
#define ASTRAL_BITS (2 | 16) /* astral characters count as letters, as in textstats.py */

static int
writable_doubles(PyObject *obj, Py_buffer *view, Py_ssize_t count)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || strcmp(view->format, "d") != 0
        || view->len != count * 8) {
        PyErr_SetString(PyExc_ValueError, "out must be a contiguous float64 buffer of the size");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int
is_sentence_end(Py_UCS4 c)
{
    return c == '.' || c == '!' || c == '?';
}

static int
is_wide_end(Py_UCS4 c)
{
    return c == 0x3002 || c == 0xFF01 || c == 0xFF1F; /* 。 ！ ？ */
}

/* Class, word and sentence counts of one text into `row`. */
static void
char_counts(PyObject *text, const unsigned char *table, double *row)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    long values[128] = {0}; /* characters per class value; bits counted from them after */
    long words = 0, sentences = 0;
    int previous_space = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        unsigned bits = c < 0x10000 ? table[c] : ASTRAL_BITS;
        values[bits & 127]++;
        int space = bits & SPACE_BIT;
        words += !space && previous_space;
        if (is_wide_end(c)) {
            sentences++;
        } else if (is_sentence_end(c)) {
            Py_UCS4 next = i + 1 < n ? PyUnicode_READ(kind, data, i + 1) : 0;
            int next_space = i + 1 >= n || ((next < 0x10000 ? table[next] : ASTRAL_BITS) & SPACE_BIT);
            sentences += next_space;
        }
        previous_space = space;
    }
    long bits_count[7] = {0};
    for (int value = 0; value < 128; value++)
        for (int b = 0; b < 7; b++)
            bits_count[b] += ((value >> b) & 1) * values[value];
    row[CHARS] = (double)n;
    for (int b = 0; b < 7; b++)
        row[SPACES + b] = (double)bits_count[b];
    row[WORDS] = (double)words;
    row[SENTENCES] = (double)sentences;
}

static int
is_word(Py_UCS4 c)
{
    if (c < 128) /* ASCII, most text: letters, digits and the underscore */
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')
            || c == '_';
    return Py_UNICODE_ISALNUM(c);
}

/* The `\w+` tokens of `text.lower()`, appended to a new list; their count and characters. */
static PyObject *
tokens_of(PyObject *text, double *row)
{
    PyObject *lowered = PyObject_CallMethod(text, "lower", NULL);
    if (lowered == NULL)
        return NULL;
    if (!PyUnicode_Check(lowered)) {
        Py_DECREF(lowered);
        PyErr_SetString(PyExc_TypeError, "lower() gave no str");
        return NULL;
    }
    PyObject *tokens = PyList_New(0);
    if (tokens == NULL) {
        Py_DECREF(lowered);
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(lowered), chars = 0;
    int kind = PyUnicode_KIND(lowered);
    const void *data = PyUnicode_DATA(lowered);
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_word(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && is_word(PyUnicode_READ(kind, data, i)))
            i++;
        PyObject *token = PyUnicode_Substring(lowered, start, i);
        if (token == NULL || PyList_Append(tokens, token) < 0) {
            Py_XDECREF(token);
            Py_DECREF(tokens);
            Py_DECREF(lowered);
            return NULL;
        }
        Py_DECREF(token);
        chars += i - start;
    }
    Py_DECREF(lowered);
    row[TOKENS] = (double)PyList_GET_SIZE(tokens);
    row[TOKEN_CHARS] = (double)chars;
    return tokens;
}

static PyObject *counts_of(PyObject *texts, PyObject *table_obj, PyObject *out_obj);

static PyObject *
counts(PyObject *self, PyObject *args)
{
    PyObject *given, *table_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &given, &table_obj, &out_obj))
        return NULL;
    /* a tuple of the texts, each exactly a str: no code of a caller's runs while it is read */
    PyObject *texts = PyList_AsTuple(given);
    if (texts == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(texts); k++) {
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(texts, k))) {
            PyErr_SetString(PyExc_TypeError, "texts must be str");
            Py_DECREF(texts);
            return NULL;
        }
    }
    PyObject *result = counts_of(texts, table_obj, out_obj);
    Py_DECREF(texts);
    return result;
}

static PyObject *
counts_of(PyObject *texts, PyObject *table_obj, PyObject *out_obj)
{
    Py_buffer table, out;
    if (PyObject_GetBuffer(table_obj, &table, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (table.len != 0x10000) {
        PyBuffer_Release(&table);
        PyErr_SetString(PyExc_ValueError, "the class table must have 65536 bytes");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(texts);
    if (writable_doubles(out_obj, &out, n * COLUMNS) < 0) {
        PyBuffer_Release(&table);
        return NULL;
    }
    PyObject *all = PyList_New(n);
    for (Py_ssize_t k = 0; all != NULL && k < n; k++) {
        PyObject *text = PyTuple_GET_ITEM(texts, k);
        double *row = (double *)out.buf + k * COLUMNS;
        char_counts(text, table.buf, row);
        PyObject *tokens = tokens_of(text, row);
        if (tokens == NULL) {
            Py_CLEAR(all);
            break;
        }
        PyList_SET_ITEM(all, k, tokens);
    }
    PyBuffer_Release(&table);
    PyBuffer_Release(&out);
    return all;
}

/* `words` (a list of tokens) as a tuple, each exactly a str, or NULL with TypeError: a
   caller's list cannot change while it is read, nor a token run code when compared. */
static PyObject *
exact_strs(PyObject *words)
{
    if (!PyList_Check(words)) {
        PyErr_SetString(PyExc_TypeError, "tokens must be lists");
        return NULL;
    }
    PyObject *tuple = PyList_AsTuple(words);
    for (Py_ssize_t i = 0; tuple != NULL && i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *word = PyTuple_GET_ITEM(tuple, i);
        if (!PyUnicode_CheckExact(word) || PyUnicode_GET_LENGTH(word) == 0) {
            PyErr_SetString(PyExc_TypeError, "tokens must be non-empty str");
            Py_CLEAR(tuple);
        }
    }
    return tuple;
}

static PyObject *
stop_shares(PyObject *self, PyObject *args)
{
    PyObject *tokens, *stop, *out_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &tokens, &stop, &out_obj))
        return NULL;
    if (!PyAnySet_Check(stop)) {
        PyErr_SetString(PyExc_TypeError, "stop must be a set or frozenset");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    Py_buffer out;
    if (writable_doubles(out_obj, &out, n) < 0)
        return NULL;
    double *share = out.buf;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *words = exact_strs(PyList_GET_ITEM(tokens, k));
        if (words == NULL) {
            PyBuffer_Release(&out);
            return NULL;
        }
        Py_ssize_t count = PyTuple_GET_SIZE(words), hits = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            int found = PySet_Contains(stop, PyTuple_GET_ITEM(words, i));
            if (found < 0) {
                Py_DECREF(words);
                PyBuffer_Release(&out);
                return NULL;
            }
            hits += found;
        }
        Py_DECREF(words);
        /* whole numbers divided as Python divides them: the same float */
        share[k] = count ? (double)hits / (double)count : 0.0;
    }
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* Add `lang` once to the language counts: to its slot in `added` when it is one of the
   `keys` of `counts` (compared by identity: the tuples of `languages_of` hold the very key
   objects), else in `counts` itself, read and written back as Python does it. */
static int
count_language(PyObject *lang, PyObject **keys, long *added, Py_ssize_t nkeys, PyObject *counts)
{
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        if (keys[j] == lang) {
            added[j]++;
            return 0;
        }
    }
    PyObject *now = PyDict_GetItemWithError(counts, lang);
    long before = now != NULL ? PyLong_AsLong(now) : 0;
    PyObject *after = PyErr_Occurred() ? NULL : PyLong_FromLong(before + 1);
    int rc = after != NULL && PyDict_SetItem(counts, lang, after) == 0 ? 0 : -1;
    Py_XDECREF(after);
    return rc;
}

/* The counts kept in `added` (one per key of `keys`), added to `counts`. */
static int
add_counts(PyObject *counts, PyObject **keys, const long *added, Py_ssize_t nkeys)
{
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        if (added[j] == 0)
            continue;
        PyObject *now = PyDict_GetItemWithError(counts, keys[j]);
        long before = now != NULL ? PyLong_AsLong(now) : 0;
        PyObject *after = PyErr_Occurred() ? NULL : PyLong_FromLong(before + added[j]);
        int bad = after == NULL || PyDict_SetItem(counts, keys[j], after) < 0;
        Py_XDECREF(after);
        if (bad)
            return -1;
    }
    return 0;
}

/* `stopwords.guess_language`'s counts over the first `limit` tokens of all texts: each
   language's function words (added to `counts`, lang -> int), the tokens whose first character
   is an ideograph or kana (class bit 32 of the table; never a function word of a list), and
   the tokens read. Returns (cjk, total). The languages already in `counts` are counted in C
   and added at the end: the same totals as adding one at a time. */
static PyObject *
language_counts(PyObject *self, PyObject *args)
{
    PyObject *tokens, *languages_of, *table_obj, *counts;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!OnO!", &PyList_Type, &tokens, &PyDict_Type, &languages_of,
                          &table_obj, &limit, &PyDict_Type, &counts))
        return NULL;
    Py_buffer table;
    if (PyObject_GetBuffer(table_obj, &table, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    const unsigned char *bits = table.buf;
    int ok = table.len == 0x10000;
    if (!ok)
        PyErr_SetString(PyExc_ValueError, "the class table must have 65536 bytes");
    /* the keys `counts` starts with, held (a str key's hash or comparison runs no code) */
    PyObject *held = ok ? PyDict_Keys(counts) : NULL;
    ok = held != NULL;
    Py_ssize_t nkeys = ok ? PyList_GET_SIZE(held) : 0;
    PyObject **keys = ok ? &PyList_GET_ITEM(held, 0) : NULL;
    long *added = ok ? PyMem_Calloc(nkeys + 1, sizeof(long)) : NULL;
    if (ok && added == NULL) {
        PyErr_NoMemory();
        ok = 0;
    }
    Py_ssize_t total = 0, cjk = 0;
    for (Py_ssize_t k = 0; ok && k < PyList_GET_SIZE(tokens) && total < limit; k++) {
        PyObject *words = exact_strs(PyList_GET_ITEM(tokens, k));
        if (words == NULL) {
            ok = 0;
            break;
        }
        for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(words) && total < limit; i++) {
            PyObject *word = PyTuple_GET_ITEM(words, i);
            total++;
            Py_UCS4 first = PyUnicode_READ_CHAR(word, 0);
            if (first < 0x10000 && (bits[first] & 32)) {
                cjk++;
                continue;
            }
            PyObject *langs = PyDict_GetItemWithError(languages_of, word);
            if (langs == NULL) {
                ok = !PyErr_Occurred();
                continue;
            }
            if (!PyTuple_Check(langs)) {
                PyErr_SetString(PyExc_TypeError, "languages_of must map words to tuples");
                ok = 0;
                break;
            }
            Py_INCREF(langs); /* held while `counts` changes */
            for (Py_ssize_t j = 0; ok && j < PyTuple_GET_SIZE(langs); j++)
                ok = count_language(PyTuple_GET_ITEM(langs, j), keys, added, nkeys, counts) == 0;
            Py_DECREF(langs);
        }
        Py_DECREF(words);
    }
    if (ok)
        ok = add_counts(counts, keys, added, nkeys) == 0;
    PyMem_Free(added);
    Py_XDECREF(held);
    PyBuffer_Release(&table);
    if (!ok)
        return NULL;
    return Py_BuildValue("(nn)", cjk, total);
}

static PyMethodDef methods[] = {
    {"counts", counts, METH_VARARGS,
     "counts(texts, class_table, out) -> tokens: per text, out[k] = characters, the seven class"
     " counts, words, sentence ends, tokens, token characters (float64 (n, 12)); tokens[k] = the"
     " lower-cased \\w+ tokens of texts[k]"},
    {"language_counts", language_counts, METH_VARARGS,
     "language_counts(tokens, languages_of, class_table, limit, counts) -> (cjk, total)"},
    {"stop_shares", stop_shares, METH_VARARGS,
     "stop_shares(tokens, stopwords, out): out[k] = share of tokens[k] in stopwords (0 if none)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_textstats", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__textstats(void)
{
    return PyModule_Create(&module);
}
