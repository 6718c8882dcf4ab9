/* The Dom's preorder walk (newscrawl/html/dom.py, `Dom._walk`), compiled.

   It fills the same node and piece lists as the Python walk, in the same order, by the same
   rules; `Dom` uses it when it was built and passed its check (`newscrawl.html.dom.COMPILED_WALK`),
   else the Python walk, and the tests compare the two on pages of every kind.

   What makes it faster is what it does not do: no (event, element) tuple per start and end, no
   Python stack of contexts, no lxml proxy per element (`Elements` keeps the nodes and makes a
   proxy when one is read), no string for a run of text that is only ASCII whitespace. It
   follows libxml2's nodes directly and asks lxml, through the C functions lxml exports for
   extensions (the `__pyx_capi__` capsules of lxml.etree), for what the Python walk reads from
   an element: its proxy (`elementFactory`), its text (`textOf`) and tail (`tailOf`), an
   attribute held otherwise than as one text (`getAttributeValue`).

   Built without lxml's or libxml2's headers (pip needs nothing but a C compiler), so the two
   structs it reads are declared below as those libraries define them: libxml2's `xmlNode`,
   unchanged since libxml2 2.0, and lxml's element proxy, unchanged since lxml 2. `html/dom.py` checks
   the walk against the Python walk on a test page at import and keeps the Python walk if they
   differ. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* libxml2's node, as tree.h declares it. */
typedef struct _xmlNode xmlNode;
struct _xmlNode {
    void *_private;
    int type; /* xmlElementType */
    const unsigned char *name;
    xmlNode *children;
    xmlNode *last;
    xmlNode *parent;
    xmlNode *next;
    xmlNode *prev;
    void *doc;
    void *ns;
    unsigned char *content;
    void *properties;
    void *nsDef;
    void *psvi;
    unsigned short line;
    unsigned short extra;
};

/* libxml2's attribute, as tree.h declares it (the fields up to `ns`, which is all that is read). */
typedef struct _xmlAttr xmlAttr;
struct _xmlAttr {
    void *_private;
    int type;
    const unsigned char *name;
    xmlNode *children;
    xmlNode *last;
    xmlNode *parent;
    xmlAttr *next;
    xmlAttr *prev;
    void *doc;
    void *ns;
};

enum {
    ELEMENT_NODE = 1, ATTRIBUTE_NODE = 2, TEXT_NODE = 3, CDATA_NODE = 4, ENTITY_REF_NODE = 5,
    PI_NODE = 7, COMMENT_NODE = 8, XINCLUDE_START = 19, XINCLUDE_END = 20
};
/* The walk recurses, one C frame per level: deeper than this (twice the parser's depth limit,
   which `html/dom.py` re-roots markup under) it raises RecursionError and dom.py walks in Python. */
enum { MAX_DEPTH = 4096 };

/* lxml's element proxy (etree.h: struct LxmlElement). */
typedef struct {
    PyObject_HEAD
    PyObject *_doc;
    xmlNode *_c_node;
    PyObject *_tag;
} LxmlElement;

typedef PyObject *(*element_factory_t)(PyObject *, xmlNode *);
typedef PyObject *(*text_of_t)(xmlNode *);
typedef PyObject *(*attribute_t)(PyObject *, PyObject *, PyObject *);

static element_factory_t element_factory;
static text_of_t text_of, tail_of;
static attribute_t attribute_value;
static PyObject *element_type; /* lxml.etree._Element */

/* `Elements`: a page's element nodes in preorder, as `Dom.elements` reads them. It keeps the
   libxml2 nodes, not an lxml proxy per element: `elements[i]` asks lxml for node i's proxy
   when a reader wants it (lxml hands back the one proxy a node has while any is alive), and
   the C readers below read the nodes without one. It holds the document's lxml `_Document`,
   which keeps the tree and its nodes alive; the Dom's readers never change the tree. */
typedef struct {
    PyObject_HEAD
    PyObject *doc;
    xmlNode **nodes;
    Py_ssize_t size, capacity;
} Elements;

static void
elements_dealloc(Elements *self)
{
    Py_XDECREF(self->doc);
    PyMem_Free(self->nodes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
elements_length(Elements *self)
{
    return self->size;
}

static PyObject *
elements_item(Elements *self, Py_ssize_t i)
{
    if (i < 0 || i >= self->size) {
        PyErr_SetString(PyExc_IndexError, "element index out of range");
        return NULL;
    }
    return element_factory(self->doc, self->nodes[i]);
}

static int
elements_append(Elements *self, xmlNode *node)
{
    if (self->size == self->capacity) {
        Py_ssize_t grown = self->capacity ? 2 * self->capacity : 256;
        xmlNode **nodes = PyMem_Realloc(self->nodes, grown * sizeof(xmlNode *));
        if (nodes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->nodes = nodes;
        self->capacity = grown;
    }
    self->nodes[self->size++] = node;
    return 0;
}

static PySequenceMethods elements_sequence = {
    .sq_length = (lenfunc)elements_length,
    .sq_item = (ssizeargfunc)elements_item,
};

static PyTypeObject ElementsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "newscrawl.html._domwalk.Elements",
    .tp_basicsize = sizeof(Elements),
    .tp_dealloc = (destructor)elements_dealloc,
    .tp_as_sequence = &elements_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Elements(): a page's element nodes in preorder, filled by walk(); "
              "elements[i] is node i's lxml element",
    .tp_new = PyType_GenericNew,
};

/* What one walk fills (the lists of `Dom`) and reads. */
/* Tag names met in one walk, by the address of libxml2's name (a document's names are
   interned in its dictionary, so one address is one name): the tag string and its facts
   (`Facts`) made once. */
enum { TAG_SLOTS = 256 };

/* What the walk reads off a tag: whether it is skipped, glue or a block, and which of the
   tags it treats apart it is. */
enum { TAG_OTHER, TAG_HEAD, TAG_A, TAG_TITLE, TAG_META, TAG_BR };
typedef struct {
    signed char skipped, glue, block, kind;
} Facts;

typedef struct {
    Elements *elements;
    PyObject *tag, *parent, *depth, *end, *children, *attributes, *piece_start;
    PyObject *piece_end;
    PyObject *piece_owner, *piece_block, *piece_text, *piece_line, *piece_glued, *piece_in_link;
    PyObject *href, *titles, *metas; /* dict node -> href; title and meta node ids */
    PyObject *path_ids, *paths; /* per node its tag path's id; (parent path id, tag) -> id */
    PyObject *shown, *skipped, *blocks, *glue; /* set of proxies; frozensets of tag names */
    PyObject *doc;
    PyObject *s_head, *s_a, *s_title, *s_meta, *s_br, *s_href, *empty;
    Py_ssize_t line;
    int last_space; /* whether the raw text before the next piece ended in whitespace */
    /* Between two texts (`Dom._closed` and the rest): the elements that held the first and
       have ended (0 none, 1 only glue, 2 other), those begun since and still open (how many,
       how many not glue), and the count of texts, blank ones too. */
    int closed;
    Py_ssize_t opened, opened_apart, texts;
    Py_UCS4 last_char; /* the last character of the raw text before the next piece */
    const unsigned char *tag_names[TAG_SLOTS];
    PyObject *tag_strings[TAG_SLOTS];
    Facts tag_facts[TAG_SLOTS];
} Walk;

/* The context an element's children inherit ("top" in dom.py) and where a text lives. */
typedef struct {
    Py_ssize_t node, depth, block;
    int in_head, in_link;
} Top;

typedef struct {
    Py_ssize_t owner, block;
    int in_head, in_link;
} Where;

static int
append_long(PyObject *list, Py_ssize_t value)
{
    PyObject *item = PyLong_FromSsize_t(value);
    if (item == NULL)
        return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

/* `" ".join(raw.split())`: `raw` itself (a new reference) when it is already so, which many
   runs of text are; "" when it is blank; else built in one pass, without the list of words
   (most runs between tags are blank or indented: three in four on real pages). */
static PyObject *
collapsed(PyObject *raw)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(raw);
    int kind = PyUnicode_KIND(raw);
    const void *data = PyUnicode_DATA(raw);
    /* one pass: the collapsed length, its widest character, and whether it is `raw` */
    Py_ssize_t size = 0;
    Py_UCS4 widest = 0;
    int clean = n > 0, in_word = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(c)) {
            /* clean keeps only single ' ' between words */
            clean = clean && c == ' ' && in_word && i < n - 1;
            in_word = 0;
            continue;
        }
        if (!in_word && size > 0)
            size++; /* the ' ' before this word */
        in_word = 1;
        size++;
        if (c > widest)
            widest = c;
    }
    if (clean)
        return Py_NewRef(raw);
    if (size == 0)
        return PyUnicode_New(0, 0);
    if (size > 1 && widest < ' ')
        widest = ' ';
    PyObject *text = PyUnicode_New(size, widest);
    if (text == NULL)
        return NULL;
    int out_kind = PyUnicode_KIND(text);
    void *out = PyUnicode_DATA(text);
    Py_ssize_t at = 0;
    in_word = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(c)) {
            in_word = 0;
            continue;
        }
        if (!in_word && at > 0)
            PyUnicode_WRITE(out_kind, out, at++, ' ');
        in_word = 1;
        PyUnicode_WRITE(out_kind, out, at++, c);
    }
    return text;
}

/* `newscrawl.html.unicode_scripts.spaceless`: a character of a script written without spaces between words. */
static int
spaceless(Py_UCS4 c)
{
    return (c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F)
        || (c >= 0x1780 && c <= 0x17FF) || (c >= 0x2E80 && c <= 0x9FFF)
        || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFFEF)
        || (c >= 0x20000 && c <= 0x3FFFF);
}

/* `Dom._between_texts`. */
static void
between_texts(Walk *w)
{
    w->texts++;
    w->closed = 0;
    w->opened = w->opened_apart = 0;
}

/* `Dom._add_piece`: record one raw text run; two elements side by side are two words (see
   GLUE_TAGS), unless a script without spaces runs across them. */
static int
add_piece(Walk *w, PyObject *raw, Where where)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(raw);
    if (n == 0)
        return 0;
    PyObject *text = collapsed(raw);
    if (text == NULL)
        return -1;
    if (PyUnicode_GET_LENGTH(text) == 0) { /* blank: it still separates its neighbours */
        Py_DECREF(text);
        w->last_space = 1;
        w->last_char = ' ';
        between_texts(w);
        return 0;
    }
    if (where.in_head || where.owner < 0) {
        Py_DECREF(text);
        return 0;
    }
    Py_UCS4 first = PyUnicode_READ_CHAR(raw, 0);
    int apart = w->closed && w->opened && (w->closed == 2 || w->opened_apart)
        && !spaceless(w->last_char) && !spaceless(first);
    between_texts(w);
    int glued = !apart && !Py_UNICODE_ISSPACE(first) && !w->last_space;
    int rc = append_long(w->piece_owner, where.owner) < 0
        || append_long(w->piece_block, where.block) < 0
        || append_long(w->piece_line, w->line) < 0 || PyList_Append(w->piece_text, text) < 0
        || PyList_Append(w->piece_glued, glued ? Py_True : Py_False) < 0
        || PyList_Append(w->piece_in_link, where.in_link ? Py_True : Py_False) < 0;
    Py_DECREF(text);
    w->last_char = PyUnicode_READ_CHAR(raw, n - 1);
    w->last_space = Py_UNICODE_ISSPACE(w->last_char);
    return rc ? -1 : 0;
}

/* The length of the text lxml's textOf or tailOf reads from the run of text nodes that
   starts at `first` (it skips XInclude markers, stops at any other node) when that text is
   only ASCII whitespace, else -1: such a run is blank, read without making its string. */
static Py_ssize_t
blank_run(xmlNode *first)
{
    Py_ssize_t size = 0;
    for (xmlNode *run = first; run != NULL; run = run->next) {
        if (run->type == XINCLUDE_START || run->type == XINCLUDE_END)
            continue;
        if (run->type != TEXT_NODE && run->type != CDATA_NODE)
            break;
        for (const unsigned char *c = run->content; c != NULL && *c; c++, size++)
            if (*c != ' ' && (*c < 0x09 || *c > 0x0D) && (*c < 0x1C || *c > 0x1F))
                return -1;
    }
    return size;
}

/* The text or tail lxml gives `node` (`get`: textOf or tailOf), recorded as a piece. */
static int
add_text(Walk *w, text_of_t get, xmlNode *node, Where where)
{
    Py_ssize_t blank = blank_run(get == text_of ? node->children : node->next);
    if (blank == 0) /* no text, or only empty text nodes: nothing, as for "" */
        return 0;
    if (blank > 0) { /* what `add_piece` does with a blank run */
        w->last_space = 1;
        w->last_char = ' ';
        between_texts(w);
        return 0;
    }
    PyObject *raw = get(node);
    if (raw == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int rc = raw == Py_None ? 0 : add_piece(w, raw, where);
    Py_DECREF(raw);
    return rc;
}

/* The element's tag as the Python walk reads it: `el.tag.lower()`. */
static PyObject *
tag_of(xmlNode *node, PyObject *proxy)
{
    if (node->ns != NULL) { /* "{namespace}name" (XHTML given as a tree): lxml builds it */
        PyObject *tag = PyObject_GetAttrString(proxy, "tag");
        if (tag == NULL)
            return NULL;
        PyObject *lower = PyUnicode_Check(tag) ? PyObject_CallMethod(tag, "lower", NULL) : NULL;
        if (lower == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "an element whose tag is not a string");
        Py_DECREF(tag);
        return lower;
    }
    PyObject *name = PyUnicode_InternFromString((const char *)node->name);
    if (name == NULL)
        return NULL;
    for (const unsigned char *c = node->name; *c; c++) {
        if (*c >= 0x80 || (*c >= 'A' && *c <= 'Z')) { /* rare: Python lower-cases it */
            PyObject *lower = PyObject_CallMethod(name, "lower", NULL);
            Py_DECREF(name);
            return lower;
        }
    }
    return name;
}

/* libxml2's attribute `name` of `node` in no namespace (what lxml's `el.get(name)` reads;
   a DTD's default attributes are not read), NULL when it has none. */
static xmlAttr *
find_attribute(xmlNode *node, const char *name)
{
    for (xmlAttr *a = (xmlAttr *)node->properties; a != NULL; a = a->next)
        if (a->ns == NULL && strcmp((const char *)a->name, name) == 0)
            return a;
    return NULL;
}

/* `el.get(name)` of the element at `node` (`plain`: `name` in UTF-8): read from the node as
   libxml2 reads an attribute of one text (or of none: ""), else by lxml through the node's
   proxy (`doc`: its lxml document). */
static PyObject *
attribute_of(xmlNode *node, PyObject *doc, PyObject *name, const char *plain)
{
    xmlAttr *found = find_attribute(node, plain);
    if (found == NULL)
        return Py_NewRef(Py_None);
    xmlNode *value = found->children;
    if (found->type == ATTRIBUTE_NODE && value == NULL)
        return PyUnicode_New(0, 0);
    if (found->type == ATTRIBUTE_NODE && value->next == NULL && value->content != NULL
        && (value->type == TEXT_NODE || value->type == CDATA_NODE)) {
        const char *text = (const char *)value->content;
        return PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), NULL);
    }
    PyObject *proxy = element_factory(doc, node);
    if (proxy == NULL)
        return NULL;
    PyObject *got = attribute_value(proxy, name, Py_None);
    Py_DECREF(proxy);
    return got;
}

/* The facts of `tag`: its place in the skipped, glue and block sets, and its kind. */
static int
facts_of(Walk *w, PyObject *tag, Facts *facts)
{
    int skipped = PySet_Contains(w->skipped, tag);
    int glue = skipped < 0 ? -1 : PySet_Contains(w->glue, tag);
    int block = glue < 0 ? -1 : PySet_Contains(w->blocks, tag);
    if (block < 0)
        return -1;
    PyObject *kinds[] = {w->s_head, w->s_a, w->s_title, w->s_meta, w->s_br};
    facts->skipped = (signed char)skipped;
    facts->glue = (signed char)glue;
    facts->block = (signed char)block;
    facts->kind = TAG_OTHER;
    for (int k = 0; k < 5 && facts->kind == TAG_OTHER; k++)
        if (PyUnicode_Compare(tag, kinds[k]) == 0)
            facts->kind = (signed char)(TAG_HEAD + k);
    return 0;
}

/* The element's tag (`tag_of`) and its facts, for an element in no namespace: made once a
   walk per name. */
static PyObject *
plain_tag(Walk *w, xmlNode *node, Facts *facts)
{
    size_t slot = ((size_t)node->name >> 4) % TAG_SLOTS;
    if (w->tag_names[slot] == node->name) {
        *facts = w->tag_facts[slot];
        return Py_NewRef(w->tag_strings[slot]);
    }
    PyObject *tag = tag_of(node, NULL);
    if (tag == NULL || facts_of(w, tag, facts) < 0) {
        Py_XDECREF(tag);
        return NULL;
    }
    Py_XSETREF(w->tag_strings[slot], Py_NewRef(tag));
    w->tag_names[slot] = node->name;
    w->tag_facts[slot] = *facts;
    return tag;
}

static int visit(Walk *w, xmlNode *c_node, Top top);

static int
visit_children(Walk *w, xmlNode *c_node, Top top)
{
    for (xmlNode *child = c_node->children; child != NULL; child = child->next) {
        if (child->type == ELEMENT_NODE) {
            if (visit(w, child, top) < 0)
                return -1;
        } else if (child->type == COMMENT_NODE || child->type == PI_NODE
                   || child->type == ENTITY_REF_NODE) { /* only their tail is read */
            Where where = {top.node, top.block, top.in_head, top.in_link};
            if (add_text(w, tail_of, child, where) < 0)
                return -1;
        }
    }
    return 0;
}

/* `Dom.path_ids` of the node being added: its parent's path id and its tag, interned in the
   order paths are first met (the Python property's numbering). */
static int
add_path(Walk *w, PyObject *tag, Py_ssize_t parent)
{
    PyObject *above = parent >= 0 ? Py_NewRef(PyList_GET_ITEM(w->path_ids, parent))
                                  : PyLong_FromLong(-1);
    PyObject *key = above != NULL ? PyTuple_Pack(2, above, tag) : NULL;
    Py_XDECREF(above);
    PyObject *id = key != NULL ? PyDict_GetItemWithError(w->paths, key) : NULL; /* borrowed */
    PyObject *fresh = NULL;
    if (id == NULL && key != NULL && !PyErr_Occurred()) { /* a path met first: the next id */
        fresh = PyLong_FromSsize_t(PyDict_GET_SIZE(w->paths));
        id = fresh != NULL && PyDict_SetItem(w->paths, key, fresh) == 0 ? fresh : NULL;
    }
    int rc = id == NULL ? -1 : PyList_Append(w->path_ids, id);
    Py_XDECREF(key);
    Py_XDECREF(fresh);
    return rc;
}

/* A node's new id: its row in every node list. */
static Py_ssize_t
add_node(Walk *w, PyObject *tag, xmlNode *c_node, Top top)
{
    Py_ssize_t node = PyList_GET_SIZE(w->tag);
    PyObject *kids = PyList_New(0);
    if (kids == NULL)
        return -1;
    int rc = PyList_Append(w->tag, tag) < 0 || append_long(w->parent, top.node) < 0
        || append_long(w->depth, top.depth + 1) < 0 || append_long(w->end, 0) < 0
        || PyList_Append(w->children, kids) < 0
        || elements_append(w->elements, c_node) < 0
        || PyList_Append(w->attributes, c_node->properties != NULL ? Py_True : Py_False) < 0
        || append_long(w->piece_start, PyList_GET_SIZE(w->piece_text)) < 0
        || append_long(w->piece_end, 0) < 0;
    Py_DECREF(kids);
    if (rc || add_path(w, tag, top.node) < 0)
        return -1;
    if (top.node >= 0
        && append_long(PyList_GET_ITEM(w->children, top.node), node) < 0)
        return -1;
    return node;
}

/* The element's own start: its flags, its node or its skip. Returns 1 when it was skipped. */
static int
visit(Walk *w, xmlNode *c_node, Top top)
{
    Where where = {top.node, top.block, top.in_head, top.in_link}; /* where its tail lives */
    if (top.depth >= MAX_DEPTH) {
        PyErr_SetString(PyExc_RecursionError, "element nesting too deep for the compiled walk");
        return -1;
    }
    /* the element's proxy, made only where lxml's own reading needs it */
    PyObject *proxy = NULL;
    if (c_node->ns != NULL && (proxy = element_factory(w->doc, c_node)) == NULL)
        return -1;
    Facts facts;
    PyObject *tag = proxy != NULL ? tag_of(c_node, proxy) : plain_tag(w, c_node, &facts);
    if (tag != NULL && proxy != NULL && facts_of(w, tag, &facts) < 0)
        Py_CLEAR(tag);
    if (tag == NULL) {
        Py_XDECREF(proxy);
        return -1;
    }
    int rc = -1;
    int skipped = facts.skipped;
    if (skipped > 0 && PySet_GET_SIZE(w->shown) > 0) { /* a <noscript> read as text is kept */
        if (proxy == NULL && (proxy = element_factory(w->doc, c_node)) == NULL)
            goto done;
        int shown = PySet_Contains(w->shown, proxy);
        skipped = shown < 0 ? -1 : !shown;
    }
    if (skipped < 0)
        goto done;
    if (skipped) {
        rc = add_text(w, tail_of, c_node, where);
        goto done;
    }
    int glue = facts.glue;
    Py_ssize_t texts_before = w->texts;
    w->opened++;
    w->opened_apart += !glue;
    Py_ssize_t node = add_node(w, tag, c_node, top);
    if (node < 0)
        goto done;
    int in_head = top.in_head, in_link = top.in_link;
    PyObject *list = NULL;
    if (facts.kind == TAG_HEAD) {
        in_head = 1;
    } else if (facts.kind == TAG_A) {
        in_link = 1;
        PyObject *href = attribute_of(c_node, w->doc, w->s_href, "href");
        if (href == NULL)
            goto done;
        PyObject *key = PyLong_FromSsize_t(node);
        int bad = key == NULL
            || PyDict_SetItem(w->href, key, PyObject_IsTrue(href) ? href : w->empty) < 0;
        Py_XDECREF(key);
        Py_DECREF(href);
        if (bad)
            goto done;
    } else if (facts.kind == TAG_TITLE) {
        list = w->titles;
    } else if (facts.kind == TAG_META) {
        list = w->metas;
    }
    if (list != NULL && append_long(list, node) < 0)
        goto done;
    int is_block = facts.block;
    if (is_block)
        w->line++;
    Py_ssize_t own_block = is_block ? node : top.block;
    Where tail = where;
    if (facts.kind == TAG_BR) /* text after a <br> is a block of its own */
        tail.block = node;
    Where inside = {node, own_block, in_head, in_link};
    if (add_text(w, text_of, c_node, inside) < 0)
        goto done;
    Top below = {node, top.depth + 1, own_block, in_head, in_link};
    if (visit_children(w, c_node, below) < 0)
        goto done;
    /* ids are preorder: the subtree ends where the next node outside it will start */
    PyObject *end = PyLong_FromSsize_t(PyList_GET_SIZE(w->piece_text));
    if (end == NULL || PyList_SetItem(w->piece_end, node, end) < 0)
        goto done;
    PyObject *stop = PyLong_FromSsize_t(PyList_GET_SIZE(w->tag));
    if (stop == NULL || PyList_SetItem(w->end, node, stop) < 0)
        goto done;
    if (is_block)
        w->line++;
    if (w->texts == texts_before) { /* it held no text: begun and ended between the same two */
        w->opened--;
        w->opened_apart -= !glue;
    } else if (w->closed < 2) {
        w->closed = glue ? 1 : 2;
    }
    rc = add_text(w, tail_of, c_node, tail);
done:
    Py_DECREF(tag);
    Py_XDECREF(proxy);
    return rc;
}

static PyObject *
walk(PyObject *self, PyObject *args)
{
    Walk w = {0};
    PyObject *root;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!", &root,
                          &PyList_Type, &w.tag, &PyList_Type, &w.parent, &PyList_Type, &w.depth,
                          &PyList_Type, &w.end,
                          &PyList_Type, &w.children,
                          &PyList_Type, &w.attributes,
                          &PyList_Type, &w.piece_start, &PyList_Type, &w.piece_end,
                          &PyList_Type, &w.piece_owner, &PyList_Type, &w.piece_block,
                          &PyList_Type, &w.piece_text, &PyList_Type, &w.piece_line,
                          &PyList_Type, &w.piece_glued, &PyList_Type, &w.piece_in_link,
                          &PyDict_Type, &w.href, &PyList_Type, &w.titles, &PyList_Type, &w.metas,
                          &PyList_Type, &w.path_ids,
                          &PySet_Type, &w.shown, &PyFrozenSet_Type, &w.skipped,
                          &PyFrozenSet_Type, &w.blocks, &PyFrozenSet_Type, &w.glue))
        return NULL;
    xmlNode *c_root = PyObject_TypeCheck(root, (PyTypeObject *)element_type)
        ? ((LxmlElement *)root)->_c_node : NULL;
    if (c_root == NULL || c_root->type != ELEMENT_NODE) {
        PyErr_SetString(PyExc_TypeError, "walk() needs an lxml element in a tree");
        return NULL;
    }
    /* the lists are filled by index as well as appended to: each its own, empty at the start */
    PyObject *lists[] = {w.tag, w.parent, w.depth, w.end, w.children, w.attributes,
                         w.piece_start, w.piece_end, w.piece_owner, w.piece_block, w.piece_text,
                         w.piece_line, w.piece_glued, w.piece_in_link, w.titles, w.metas,
                         w.path_ids};
    enum { LISTS = sizeof(lists) / sizeof(lists[0]) };
    for (int i = 0; i < LISTS; i++) {
        int shared = 0;
        for (int j = 0; j < i; j++)
            shared |= lists[i] == lists[j];
        if (shared || PyList_GET_SIZE(lists[i]) != 0 || PyDict_GET_SIZE(w.href) != 0) {
            PyErr_SetString(PyExc_ValueError, "walk() fills empty lists of its own");
            return NULL;
        }
    }
    w.doc = ((LxmlElement *)root)->_doc;
    w.elements = (Elements *)PyType_GenericNew(&ElementsType, NULL, NULL);
    if (w.elements == NULL)
        return NULL;
    w.elements->doc = Py_NewRef(w.doc);
    w.s_head = PyUnicode_InternFromString("head");
    w.s_a = PyUnicode_InternFromString("a");
    w.s_title = PyUnicode_InternFromString("title");
    w.s_meta = PyUnicode_InternFromString("meta");
    w.s_br = PyUnicode_InternFromString("br");
    w.s_href = PyUnicode_InternFromString("href");
    w.empty = PyUnicode_InternFromString("");
    w.last_space = 1;
    w.last_char = ' ';
    w.paths = PyDict_New();
    PyObject *result = NULL;
    if (w.paths && w.s_head && w.s_a && w.s_title && w.s_meta && w.s_br && w.s_href
        && w.empty) {
        Top top = {-1, -1, -1, 0, 0};
        if (visit(&w, c_root, top) == 0)
            result = Py_NewRef((PyObject *)w.elements);
    }
    Py_DECREF(w.elements);
    Py_XDECREF(w.paths);
    Py_XDECREF(w.s_head);
    Py_XDECREF(w.s_a);
    Py_XDECREF(w.s_title);
    Py_XDECREF(w.s_meta);
    Py_XDECREF(w.s_br);
    Py_XDECREF(w.s_href);
    Py_XDECREF(w.empty);
    for (int i = 0; i < TAG_SLOTS; i++)
        Py_XDECREF(w.tag_strings[i]);
    return result;
}

/* Whether libxml2's element `node` has an attribute `name` in no namespace (what lxml's
   `el.get(name)` finds). */
static int
has_attribute(xmlNode *node, const char *name)
{
    return find_attribute(node, name) != NULL;
}

/* How many elements `elements` holds (a list of lxml elements or an `Elements`), -1 with
   TypeError for anything else (`reader`: the function's name, for the message). */
static Py_ssize_t
elements_count(PyObject *elements, const char *reader)
{
    if (PyList_Check(elements))
        return PyList_GET_SIZE(elements);
    if (PyObject_TypeCheck(elements, &ElementsType))
        return ((Elements *)elements)->size;
    PyErr_Format(PyExc_TypeError, "%s() reads lxml elements in a tree", reader);
    return -1;
}

/* Element i of `elements` (within `elements_count`) as its libxml2 node and lxml document;
   NULL with TypeError where a list holds anything but an lxml element in a tree. */
static xmlNode *
element_node(PyObject *elements, Py_ssize_t i, PyObject **doc, const char *reader)
{
    if (!PyList_Check(elements)) {
        *doc = ((Elements *)elements)->doc;
        return ((Elements *)elements)->nodes[i];
    }
    PyObject *el = PyList_GET_ITEM(elements, i);
    xmlNode *node = PyObject_TypeCheck(el, (PyTypeObject *)element_type)
        ? ((LxmlElement *)el)->_c_node : NULL;
    if (node == NULL || node->type != ELEMENT_NODE) {
        PyErr_Format(PyExc_TypeError, "%s() reads lxml elements in a tree", reader);
        return NULL;
    }
    *doc = ((LxmlElement *)el)->_doc;
    return node;
}

/* Whether `name` is one the readers below match as lxml would: not empty, no "{namespace}"
   and no wildcard ("*", "{*}name"), which lxml reads with rules of its own. */
static int
plain_name(const char *name)
{
    if (*name == '\0' || strpbrk(name, "{}*") != NULL) {
        PyErr_SetString(PyExc_ValueError, "a name in no namespace, without wildcards, is needed");
        return 0;
    }
    return 1;
}

/* `with_attribute(elements, name)`: the indices of the elements (a list of lxml elements or
   an `Elements`) that have attribute `name` written on them (in no namespace; a DTD's default
   attributes are not read): `[i for i, el in enumerate(elements) if el.get(name) is not None]`
   without a Python call per element. */
static PyObject *
with_attribute(PyObject *self, PyObject *args)
{
    PyObject *elements, *doc;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &elements, &name) || !plain_name(name))
        return NULL;
    Py_ssize_t count = elements_count(elements, "with_attribute");
    PyObject *found = count < 0 ? NULL : PyList_New(0);
    for (Py_ssize_t i = 0; found != NULL && i < count; i++) {
        xmlNode *node = element_node(elements, i, &doc, "with_attribute");
        if (node == NULL || (has_attribute(node, name) && append_long(found, i) < 0))
            Py_CLEAR(found);
    }
    return found;
}

/* `attribute_values(elements, nodes, names)`: per node id of `nodes`, None when its element
   has no attribute, else the tuple of its values of `names` (None where one is missing):
   `tuple(elements[node].get(name) for name in names)`, one C call for all the nodes, without
   their proxies where libxml2 holds a value as one text. */
static PyObject *
attribute_values(PyObject *self, PyObject *args)
{
    PyObject *elements, *nodes, *names, *doc;
    if (!PyArg_ParseTuple(args, "OO!O!", &elements, &PyList_Type, &nodes, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    const char *plain[16];
    if (count > 16) {
        PyErr_SetString(PyExc_ValueError, "attribute_values() reads at most 16 names");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        plain[j] = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (plain[j] == NULL || strlen(plain[j]) != (size_t)PyUnicode_GET_LENGTH(name)
            || !plain_name(plain[j])) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "names must be ASCII names in no namespace");
            return NULL;
        }
    }
    Py_ssize_t size = elements_count(elements, "attribute_values");
    if (size < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(nodes);
    PyObject *found = PyList_New(n);
    for (Py_ssize_t k = 0; found != NULL && k < n; k++) {
        Py_ssize_t node = PyLong_AsSsize_t(PyList_GET_ITEM(nodes, k));
        if (node < 0 || node >= size) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "a node id out of the elements' range");
            Py_CLEAR(found);
            break;
        }
        xmlNode *c_node = element_node(elements, node, &doc, "attribute_values");
        if (c_node == NULL) {
            Py_CLEAR(found);
            break;
        }
        if (c_node->properties == NULL) {
            PyList_SET_ITEM(found, k, Py_NewRef(Py_None));
            continue;
        }
        PyObject *values = PyTuple_New(count);
        for (Py_ssize_t j = 0; values != NULL && j < count; j++) {
            PyObject *value = attribute_of(c_node, doc, PyTuple_GET_ITEM(names, j), plain[j]);
            if (value == NULL)
                Py_CLEAR(values);
            else
                PyTuple_SET_ITEM(values, j, value);
        }
        if (values == NULL) {
            Py_CLEAR(found);
            break;
        }
        PyList_SET_ITEM(found, k, values);
    }
    return found;
}

/* `named(root, name)`: the elements of root's subtree (root included) whose tag is `name`, in
   document order: `list(root.iter(name))` for a name in no namespace, walked in C. */
static PyObject *
named(PyObject *self, PyObject *args)
{
    PyObject *root;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s", (PyTypeObject *)element_type, &root, &name)
        || !plain_name(name))
        return NULL;
    xmlNode *top = ((LxmlElement *)root)->_c_node;
    if (top == NULL || top->type != ELEMENT_NODE) {
        PyErr_SetString(PyExc_TypeError, "named() needs an lxml element in a tree");
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL)
        return NULL;
    xmlNode *node = top;
    while (node != NULL) {
        if (node->ns == NULL && strcmp((const char *)node->name, name) == 0) {
            PyObject *proxy = element_factory(((LxmlElement *)root)->_doc, node);
            int rc = proxy == NULL ? -1 : PyList_Append(found, proxy);
            Py_XDECREF(proxy);
            if (rc < 0) {
                Py_DECREF(found);
                return NULL;
            }
        }
        /* preorder without recursion: the first element child, else the next element up */
        xmlNode *next = node->children;
        while (next != NULL && next->type != ELEMENT_NODE)
            next = next->next;
        while (next == NULL && node != top) {
            for (next = node->next; next != NULL && next->type != ELEMENT_NODE; next = next->next)
                ;
            if (next == NULL)
                node = node->parent;
        }
        node = next;
    }
    return found;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(root, tag, parent, depth, end, children, attributes, piece_start, piece_end,"
     " piece_owner,"
     " piece_block, piece_text, piece_line, piece_glued, piece_in_link, href, titles, metas,"
     " path_ids,"
     " shown, skipped_tags, block_tags, glue_tags): fill the lists as Dom._walk does; the ids"
     " of <title> and <meta> elements go to titles and metas; returns the nodes' Elements"},
    {"with_attribute", with_attribute, METH_VARARGS,
     "with_attribute(elements, name): indices of the elements that have attribute name"},
    {"attribute_values", attribute_values, METH_VARARGS,
     "attribute_values(elements, nodes, names): per node None (no attribute) or its values"},
    {"named", named, METH_VARARGS,
     "named(root, name): the elements of root's subtree named name, in document order"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_domwalk", NULL, -1, methods};

/* A function lxml.etree exports for C extensions, from its capsule. */
static void *
lxml_function(PyObject *capi, const char *name)
{
    PyObject *capsule = PyDict_GetItemString(capi, name);
    if (capsule == NULL || !PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_ImportError, "lxml.etree exports no %s", name);
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
}

PyMODINIT_FUNC
PyInit__domwalk(void)
{
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (etree == NULL)
        return NULL;
    PyObject *capi = PyObject_GetAttrString(etree, "__pyx_capi__");
    element_type = PyObject_GetAttrString(etree, "_Element");
    Py_DECREF(etree);
    if (capi == NULL || element_type == NULL || !PyDict_Check(capi)) {
        Py_XDECREF(capi);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ImportError, "lxml.etree has no C functions to export");
        return NULL;
    }
    element_factory = (element_factory_t)lxml_function(capi, "elementFactory");
    text_of = (text_of_t)lxml_function(capi, "textOf");
    tail_of = (text_of_t)lxml_function(capi, "tailOf");
    attribute_value = (attribute_t)lxml_function(capi, "getAttributeValue");
    Py_DECREF(capi);
    if (!element_factory || !text_of || !tail_of || !attribute_value)
        return NULL;
    if (PyType_Ready(&ElementsType) < 0)
        return NULL;
    PyObject *made = PyModule_Create(&module);
    if (made != NULL && PyModule_AddObjectRef(made, "Elements", (PyObject *)&ElementsType) < 0)
        Py_CLEAR(made);
    return made;
}
