"""What TF's checkpoint readers show of a checkpoint, reproduced for tapeflow's own format.

* ``object_graph(...)``: the ``_CHECKPOINTABLE_OBJECT_GRAPH`` entry TF writes into every
  checkpoint: a serialized ``TrackableObjectGraph`` proto (hand-encoded, as train/example.py
  encodes tf.train.Example): one node per object, in breadth-first order from the Checkpoint
  (its keyword children sorted, then later attributes and ``save_counter`` as they came, as
  TF tracks them), each with its
  children, its saved attributes (``VARIABLE_VALUE`` with the variable's name and key; a
  table's ``table``) and ``has_checkpoint_values``. tapeflow keeps no object graph of its own
  beyond the keys, so the nodes are those of the saved keys' paths: an object holding no saved
  value has no node (TF lists it: a static table's ``_initializer``), a module's attributes
  come in tapeflow's walk order (by name; TF: as assigned), a second path to a variable inside
  one root is not known (across roots it is: the index's aliases), and optimizer slots are
  plain paths (tapeflow's ``.OPTIMIZER_SLOT`` keys; Keras 3's optimizers in TF save theirs
  as a list of variables). Checked against TF 2.21 in tests/test_checkpoint_inspection.py.
* ``reader_order(keys)``: the order in which TF's ``CheckpointReader.get_variable_to_shape_map()``
  (and ``..._dtype_map``) hands out the keys: the C++ reader fills a ``std::unordered_map`` in
  key order and Python's dict keeps its iteration order, which is libstdc++'s: nodes in one
  singly-linked list, a key into an empty bucket at the list's front, into a used bucket at the
  front of that bucket's run, the buckets grown through libstdc++'s prime list (13, 29, 59,
  127, ...) and the list rebuilt in that way on each growth, with ``std::hash<string>``
  (``_Hash_bytes``, MurmurHash64A-like with seed 0xc70f6907). Checked against TF 2.21's
  readers for checkpoints of 2 to 3,001 keys (tests/test_checkpoint_inspection.py), and once
  against a C++ program filling a g++ 12 ``std::unordered_map`` for 2 to 400,001 keys (3,001 keys:
  13 ms here; 400,001: 5 s). Past the primes listed (~528k keys) it gives the sorted order.

``CheckpointReader`` (train/checkpoint.py) and ``list_variables`` use them, so code that prints a
checkpoint's contents (the checkpoint migration guide's ``print_checkpoint``) prints what TF prints.
"""
from __future__ import annotations

import bisect
from collections import deque

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"

# -- std::unordered_map<std::string, ...> iteration order (libstdc++) ---------------------------

_M64 = (1 << 64) - 1
_MUL = (0xc6a4a793 << 32) + 0x5bd1e995


def _shift_mix(v):
    return v ^ (v >> 47)


def std_hash(b: bytes, seed=0xc70f6907) -> int:
    """libstdc++'s ``std::_Hash_bytes`` on 64-bit (``std::hash<std::string>``)."""
    n = len(b)
    aligned = n & ~7
    h = (seed ^ (n * _MUL)) & _M64
    for i in range(0, aligned, 8):
        data = (_shift_mix((int.from_bytes(b[i:i + 8], "little") * _MUL) & _M64) * _MUL) & _M64
        h = ((h ^ data) * _MUL) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(b[aligned:], "little")) * _MUL) & _M64
    h = (_shift_mix(h) * _MUL) & _M64
    return _shift_mix(h)


# libstdc++'s __prime_list up to ~1M buckets (its _Prime_rehash_policy picks from it)
_PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
           103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337,
           359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289,
           1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349,
           4703, 5087, 5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033,
           15173, 16411, 17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043,
           45481, 49201, 53201, 57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731,
           126271, 136607, 147793, 159871, 172933, 187091, 202409, 218971, 236897, 256279, 277261, 299951,
           324503, 351061, 379787, 410857, 444487, 480881, 520241, 562841, 608903, 658753, 712697, 771049,
           834181, 902483, 976369, 1056323]
_FAST = [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13]


def reader_order(keys):
    """``keys`` in the iteration order of a libstdc++ unordered_map filled in sorted order
    (see the module docstring). Past the primes listed here (about 528,000 keys) the sorted order."""
    keys = sorted(set(keys))
    if 2 * len(keys) > _PRIMES[-1]:
        return keys
    head = object()
    nxt = {head: None}
    buckets = {}
    nbkt, next_resize = 1, 0
    hashes = {k: std_hash(k.encode("utf-8")) for k in keys}
    for count, k in enumerate(keys):
        if count + 1 > next_resize:     # _Prime_rehash_policy::_M_need_rehash (max_load_factor 1)
            min_bkts = max(count + 1, 0 if next_resize else 11)
            if min_bkts >= nbkt:
                want = max(min_bkts + 1, nbkt * 2)
                new = _FAST[want] if want < len(_FAST) else _PRIMES[bisect.bisect_left(_PRIMES, want, lo=6)]
                next_resize = new
                # _M_rehash_aux (unique keys): the list rebuilt node by node
                p, nxt[head], newb, first_bkt = nxt[head], None, {}, 0
                while p is not None:
                    q, b = nxt[p], hashes[p] % new
                    if b not in newb:
                        nxt[p], nxt[head] = nxt[head], p
                        newb[b] = head
                        if nxt[p] is not None:
                            newb[first_bkt] = p
                        first_bkt = b
                    else:
                        nxt[p], nxt[newb[b]] = nxt[newb[b]], p
                    p = q
                buckets, nbkt = newb, new
            else:
                next_resize = nbkt
        b = hashes[k] % nbkt
        if b in buckets:                # _M_insert_bucket_begin
            before = buckets[b]
            nxt[k], nxt[before] = nxt[before], k
        else:
            nxt[k], nxt[head] = nxt[head], k
            if nxt[k] is not None:
                buckets[hashes[nxt[k]] % nbkt] = k
            buckets[b] = head
    out, p = [], nxt[head]
    while p is not None:
        out.append(p)
        p = nxt[p]
    return out


# -- TrackableObjectGraph (tensorflow/core/protobuf/trackable_object_graph.proto) ----------------

def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len_field(num, payload):
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _int_field(num, v):
    return _varint(num << 3) + _varint(v) if v else b""      # proto3: a zero is not written


def _str_field(num, s):
    return _len_field(num, s.encode("utf-8")) if s else b""


class _Node:
    __slots__ = ("children", "attributes", "id")

    def __init__(self):
        self.children = {}      # local name -> _Node, in insertion order
        self.attributes = []    # (name, full_name, checkpoint_key)
        self.id = None

    def encode(self):
        out = b"".join(_len_field(1, _int_field(1, c.id) + _str_field(2, name)) for name, c in self.children.items())
        out += b"".join(_len_field(2, _str_field(1, n) + _str_field(2, f) + _str_field(3, k))
                        for n, f, k in self.attributes)
        return out + _len_field(5, _int_field(1, 1))    # has_checkpoint_values: BoolValue(true)


def _walk_key(path):
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("/"))


def object_graph(variables, tables=(), root_order=(), aliases=None):
    """The serialized TrackableObjectGraph of a checkpoint holding ``variables``
    (``[(key, variable name)]``, tapeflow's keys: the objects' paths) and ``tables``
    (``[path]``: objects saving a ``table`` attribute). ``root_order``: the Checkpoint's
    children in TF's order (its keyword arguments sorted, later attributes and
    ``save_counter`` in the order they came). ``aliases``: ``{key: stored key}``, a second
    path to a saved variable (TF's child reference to the same node)."""
    root = _Node()
    for name in root_order:
        root.children[name] = _Node()

    def node_at(path):
        node = root
        for part in path.split("/") if path else ():
            node = node.children.setdefault(part, _Node())
        return node

    items = [(key, ("VARIABLE_VALUE", full_name, key + VARIABLE_SUFFIX)) for key, full_name in variables]
    for path in tables:
        # a table goes where tapeflow's walk met it among the variables (a module's attributes
        # by name, a list's items by index): before the first variable that sorts after it
        at = _walk_key(path)
        i = next((i for i, (k, _) in enumerate(items) if _walk_key(k) > at), len(items))
        items.insert(i, (path, ("table", "", path + "/.ATTRIBUTES/table")))
    for key, attribute in items:
        node_at(key).attributes.append(attribute)
    for alias, stored in (aliases or {}).items():
        parent, _, leaf = alias.rpartition("/")
        node_at(parent).children.setdefault(leaf, node_at(stored))
    for name in [n for n, c in root.children.items() if not c.children and not c.attributes]:
        del root.children[name]     # a root that saved nothing (e.g. no save_counter yet)
    order, queue = [], deque([root])
    while queue:                    # breadth-first node ids, as TF's ObjectGraphView
        node = queue.popleft()
        if node.id is not None:
            continue
        node.id = len(order)
        order.append(node)
        queue.extend(node.children.values())
    return b"".join(_len_field(1, n.encode()) for n in order)
