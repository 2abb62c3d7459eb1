#!/usr/bin/env python3
"""Generates Eddy's Kafka message codecs from Kafka's JSON message definitions.

Usage (from the repository root):

    python3 src/protocol/codegen/generate.py /path/to/kafka-protocol/messages

Reads the definitions (JSON with // comments) of the messages Eddy implements
(APIS, HEADERS, DATA_TYPES and CONTROL_RECORDS below), and Eddy's own records
of the controller log (EDDY_RECORDS, from src/protocol/records/), and writes:

  src/protocol/generated/<api>.h/.cc   one pair per API: <Api>Request and
                                       <Api>Response (plus header.h/.cc for
                                       RequestHeader/ResponseHeader and
                                       consumer_protocol.h/.cc for the
                                       ConsumerProtocol* data types,
                                       leader_change_message.h/.cc for
                                       KRaft's LeaderChange control record)
  src/protocol/generated/apis.h        the API table (key, name, versions)
  src/protocol/generated/messages.h    includes every generated header
  src/protocol/generated/sources.cmake the generated .cc files
  tests/unit/protocol/generated/test_messages.h/.cc
                                       test-only: fill_test_values() for
                                       every struct, and request dispatch by
                                       api key for the fuzzer

The output is committed; the build never runs this script. Python 3 standard
library only. Run it again after changing the list of messages or updating the
definitions, and commit the result.

What the generated C++ carries from the definitions: names (snake_case
fields, CamelCase nested struct types), types, validVersions, apiKey,
flexibleVersions, per-field versions / nullableVersions / taggedVersions /
tag / default / ignorable. The "about" prose is not copied.
"""

import json
import os
import re
import sys

# ---------------------------------------------------------------------------
# What to generate
# ---------------------------------------------------------------------------

# (file stem, JSON base name): <base>Request.json and <base>Response.json.
APIS = [
    ("produce", "Produce"),
    ("fetch", "Fetch"),
    ("list_offsets", "ListOffsets"),
    ("metadata", "Metadata"),
    ("offset_commit", "OffsetCommit"),
    ("offset_fetch", "OffsetFetch"),
    ("find_coordinator", "FindCoordinator"),
    ("join_group", "JoinGroup"),
    ("heartbeat", "Heartbeat"),
    ("leave_group", "LeaveGroup"),
    ("sync_group", "SyncGroup"),
    ("describe_groups", "DescribeGroups"),
    ("list_groups", "ListGroups"),
    ("sasl_handshake", "SaslHandshake"),
    ("api_versions", "ApiVersions"),
    ("create_topics", "CreateTopics"),
    ("delete_topics", "DeleteTopics"),
    ("delete_records", "DeleteRecords"),
    ("init_producer_id", "InitProducerId"),
    ("add_partitions_to_txn", "AddPartitionsToTxn"),
    ("add_offsets_to_txn", "AddOffsetsToTxn"),
    ("end_txn", "EndTxn"),
    ("txn_offset_commit", "TxnOffsetCommit"),
    ("offset_for_leader_epoch", "OffsetForLeaderEpoch"),
    ("describe_acls", "DescribeAcls"),
    ("create_acls", "CreateAcls"),
    ("delete_acls", "DeleteAcls"),
    ("describe_configs", "DescribeConfigs"),
    ("alter_configs", "AlterConfigs"),
    ("describe_log_dirs", "DescribeLogDirs"),
    ("sasl_authenticate", "SaslAuthenticate"),
    ("create_partitions", "CreatePartitions"),
    ("delete_groups", "DeleteGroups"),
    ("incremental_alter_configs", "IncrementalAlterConfigs"),
    ("offset_delete", "OffsetDelete"),
    ("describe_client_quotas", "DescribeClientQuotas"),
    ("describe_user_scram_credentials", "DescribeUserScramCredentials"),
    ("alter_user_scram_credentials", "AlterUserScramCredentials"),
    ("describe_cluster", "DescribeCluster"),
    ("describe_transactions", "DescribeTransactions"),
    ("list_transactions", "ListTransactions"),
    # kafka-transactions abort / describe-producers / find-hanging, and a
    # cluster's transaction coordinator asking a partition leader for markers.
    ("write_txn_markers", "WriteTxnMarkers"),
    ("describe_producers", "DescribeProducers"),
    # KRaft (the Raft group's own RPCs, not answered by the broker yet).
    ("vote", "Vote"),
    ("begin_quorum_epoch", "BeginQuorumEpoch"),
    ("end_quorum_epoch", "EndQuorumEpoch"),
    ("describe_quorum", "DescribeQuorum"),
    ("fetch_snapshot", "FetchSnapshot"),
    # A cluster node's controller listener: requests forwarded by another
    # node (Envelope), a node's client endpoints (BrokerRegistration) and
    # the blocks of producer ids a node hands out (AllocateProducerIds).
    ("envelope", "Envelope"),
    ("broker_registration", "BrokerRegistration"),
    ("allocate_producer_ids", "AllocateProducerIds"),
]
HEADERS = ("header", ["RequestHeader", "ResponseHeader"])
DATA_TYPES = ("consumer_protocol", ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment"])
# The value of KRaft's LeaderChange control record (src/raft/kafka_wire.*).
CONTROL_RECORDS = ("leader_change_message", ["LeaderChangeMessage"])
# Eddy's own records of the controller log (src/broker/controller_records.*),
# defined in Kafka's format in src/protocol/records/ (not Kafka's messages).
EDDY_RECORDS = ("controller_records", ["ClusterIdRecord", "RegisterBrokerRecord", "TopicRecord",
                                       "RemoveTopicRecord", "PartitionsAddedRecord", "TopicConfigsRecord",
                                       "GroupOffsetsRecord", "GroupDeletedRecord", "OffsetsDeletedRecord",
                                       "ProducerIdsRecord", "StaticMemberRecord", "StaticMemberRemovedRecord",
                                       "ForwardCursorsRecord", "PartitionLeadersRecord",
                                       "NodeFencingRecord"])

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SRC_OUT = os.path.join(REPO_ROOT, "src", "protocol", "generated")
TEST_OUT = os.path.join(REPO_ROOT, "tests", "unit", "protocol", "generated")

BANNER = ("// Generated by src/protocol/codegen/generate.py from Kafka's message definitions\n"
          "// ({sources}). Do not edit; regenerate.\n")

# ---------------------------------------------------------------------------
# Reading the definitions
# ---------------------------------------------------------------------------


def strip_comments(text):
    """Removes // comments (outside string literals) from JSON text."""
    out = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            out.append(c)
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def load_definition(messages_dir, name):
    path = os.path.join(messages_dir, name + ".json")
    with open(path, encoding="utf-8") as f:
        return json.loads(strip_comments(f.read()))


class GenError(Exception):
    pass


# ---------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------

MAX_VERSION = 0x7FFF


class Versions:
    """An inclusive version range; empty when lo > hi."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @staticmethod
    def parse(spec):
        spec = spec.strip()
        if spec == "none":
            return Versions(1, 0)
        if spec.endswith("+"):
            return Versions(int(spec[:-1]), MAX_VERSION)
        if "-" in spec:
            lo, hi = spec.split("-")
            return Versions(int(lo), int(hi))
        v = int(spec)
        return Versions(v, v)

    def empty(self):
        return self.lo > self.hi

    def contains(self, v):
        return self.lo <= v <= self.hi

    def intersect(self, other):
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def union_hull(self, other):
        if self.empty():
            return other
        if other.empty():
            return self
        return Versions(min(self.lo, other.lo), max(self.hi, other.hi))

    def covers(self, other):
        return other.empty() or (self.lo <= other.lo and self.hi >= other.hi)

    def __iter__(self):
        return iter(range(self.lo, self.hi + 1))

    def __str__(self):
        if self.empty():
            return "none"
        if self.hi == MAX_VERSION:
            return "%d+" % self.lo
        if self.lo == self.hi:
            return "%d" % self.lo
        return "%d-%d" % (self.lo, self.hi)


def condition(versions, ctx):
    """C++ condition on `version` for versions, knowing version is in ctx."""
    r = versions.intersect(ctx)
    if r.empty():
        return "false"
    parts = []
    if r.lo > ctx.lo:
        parts.append("version >= %d" % r.lo)
    if r.hi < ctx.hi:
        parts.append("version <= %d" % r.hi)
    return " && ".join(parts) if parts else "true"


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------

PRIMITIVES = {
    # JSON type -> (C++ type, Reader/Writer suffix, encoded size)
    "bool": ("bool", "bool", 1),
    "int8": ("int8_t", "int8", 1),
    "int16": ("int16_t", "int16", 2),
    "uint16": ("uint16_t", "uint16", 2),
    "int32": ("int32_t", "int32", 4),
    "uint32": ("uint32_t", "uint32", 4),
    "int64": ("int64_t", "int64", 8),
    "float64": ("double", "float64", 8),
}
INT_LIMITS = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
SCALARS = set(PRIMITIVES) | {"string", "bytes", "records", "uuid"}
KNOWN_FIELD_KEYS = {
    "name", "type", "versions", "about", "fields", "nullableVersions", "default", "ignorable",
    "mapKey", "entityType", "tag", "taggedVersions", "flexibleVersions", "zeroCopy",
}
KNOWN_MESSAGE_KEYS = {
    "apiKey", "type", "listeners", "name", "validVersions", "deprecatedVersions", "flexibleVersions",
    "fields", "commonStructs", "latestVersionUnstable",
}
RUNTIME_NAMES = {"Records", "Uuid", "Reader", "Writer", "TaggedField", "TaggedFieldsWriter", "Status",
                 "OutputBuffer", "FileRegion", "Filler"}
CPP_RESERVED = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
    "const", "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit",
    "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private",
    "protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
    "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "while", "xor", "requires", "concept",
    # names the generated functions use for parameters and locals
    "version", "flexible", "r", "w", "t", "n", "i", "j", "e", "f", "tags", "tag", "m",
    # member functions of generated structs
    "decode", "encode", "unknown_tagged_fields",
}


def snake_case(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = s.lower()
    if s in CPP_RESERVED:
        s += "_"
    return s


class Field:
    def __init__(self, spec, owner):
        unknown = set(spec) - KNOWN_FIELD_KEYS
        if unknown:
            raise GenError("%s.%s: unknown field attributes %s" % (owner, spec.get("name"), sorted(unknown)))
        self.json_name = spec["name"]
        self.name = snake_case(spec["name"])
        self.type = spec["type"]
        self.versions = Versions.parse(spec["versions"])
        self.nullable_versions = Versions.parse(spec.get("nullableVersions", "none"))
        self.tagged_versions = Versions.parse(spec.get("taggedVersions", "none"))
        self.tag = int(spec["tag"]) if "tag" in spec else None
        if (self.tag is None) != self.tagged_versions.empty():
            raise GenError("%s.%s: tag and taggedVersions go together" % (owner, self.json_name))
        self.ignorable = bool(spec.get("ignorable", False))
        self.default = spec.get("default")
        self.flexible_override = (Versions.parse(spec["flexibleVersions"])
                                  if "flexibleVersions" in spec else None)
        self.field_specs = spec.get("fields")
        self.struct = None  # Struct, for struct and array-of-struct fields

        t = self.type
        if t.startswith("[]"):
            self.kind = "array"
            self.elem = t[2:]
            if self.elem in SCALARS:
                if self.field_specs:
                    raise GenError("%s.%s: array of %s with fields" % (owner, self.json_name, self.elem))
                if self.elem == "records":
                    raise GenError("%s.%s: array of records" % (owner, self.json_name))
        elif t in SCALARS:
            self.kind = t if t in ("string", "bytes", "records", "uuid") else "primitive"
            self.elem = None
        else:
            self.kind = "struct"
            self.elem = t
        self.nullable = not self.nullable_versions.empty()
        if self.nullable and self.kind in ("primitive", "uuid"):
            raise GenError("%s.%s: a %s cannot be nullable" % (owner, self.json_name, self.type))

    def struct_elem(self):
        return self.kind == "struct" or (self.kind == "array" and self.elem not in SCALARS)


class Struct:
    def __init__(self, name, field_specs, message):
        if name in RUNTIME_NAMES:
            raise GenError("%s: struct name %s collides with a runtime type" % (message.name, name))
        self.name = name
        self.message = message
        self.fields = [Field(s, name) for s in field_specs]
        self.field_specs = field_specs
        self.ctx = Versions(1, 0)  # versions in which the struct can appear
        self.qualified = None
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise GenError("%s: duplicate field names in %s" % (message.name, name))
        tags = [f.tag for f in self.fields if f.tag is not None]
        if len(set(tags)) != len(tags):
            raise GenError("%s: duplicate tags in %s" % (message.name, name))

    def tagged_fields(self):
        return sorted((f for f in self.fields if f.tag is not None), key=lambda f: f.tag)

    def signature(self):
        """Everything but the prose, to tell identical re-declarations apart."""
        def strip(specs):
            return [{k: (strip(v) if k == "fields" else v) for k, v in spec.items() if k != "about"}
                    for spec in specs]
        return json.dumps(strip(self.field_specs), sort_keys=True)


class Message:
    def __init__(self, spec):
        unknown = set(spec) - KNOWN_MESSAGE_KEYS
        if unknown:
            raise GenError("%s: unknown message attributes %s" % (spec.get("name"), sorted(unknown)))
        self.name = spec["name"]
        self.kind = spec["type"]  # request, response, header, data
        self.api_key = spec.get("apiKey")
        self.valid = Versions.parse(spec["validVersions"])
        self.flexible = Versions.parse(spec.get("flexibleVersions", "none"))
        self.latest_unstable = bool(spec.get("latestVersionUnstable", False))
        self.root = Struct(self.name, spec["fields"], self)
        self.root.ctx = self.valid
        self.root.qualified = self.name
        self.common = {}
        for c in spec.get("commonStructs", []):
            self.common[c["name"]] = Struct(c["name"], c["fields"], self)
        self.structs = []  # nested structs, dependencies first
        self._by_name = {}
        self._resolve(self.root, self.valid)
        self._order()

    def has_flexible(self):
        return not self.flexible.intersect(self.valid).empty()

    def _resolve(self, struct, ctx):
        """Links struct-typed fields to Struct objects and widens their ctx."""
        for f in struct.fields:
            if not f.struct_elem():
                continue
            present = f.versions.intersect(ctx)
            name = f.elem
            if f.field_specs is not None:
                s = Struct(name, f.field_specs, self)
                if name in self.common:
                    raise GenError("%s: struct %s shadows a common struct" % (self.name, name))
                existing = self._by_name.get(name)
                if existing is not None:
                    if existing.signature() != s.signature():
                        raise GenError("%s: two different structs named %s" % (self.name, name))
                    s = existing
            elif name in self.common:
                s = self.common[name]
            else:
                raise GenError("%s: unknown type %s of field %s" % (self.name, f.type, f.json_name))
            self._by_name[name] = s
            s.qualified = self.name + "::" + name
            f.struct = s
            before = (s.ctx.lo, s.ctx.hi)
            s.ctx = s.ctx.union_hull(present)
            if (s.ctx.lo, s.ctx.hi) != before or f.field_specs is not None:
                self._resolve(s, s.ctx)

    def _order(self):
        seen = set()

        def visit(struct):
            for f in struct.fields:
                if f.struct is not None and f.struct.name not in seen:
                    seen.add(f.struct.name)
                    visit(f.struct)
                    self.structs.append(f.struct)

        visit(self.root)


# ---------------------------------------------------------------------------
# C++ types, defaults, sizes
# ---------------------------------------------------------------------------


def elem_cpp(f):
    if f.elem in PRIMITIVES:
        return PRIMITIVES[f.elem][0]
    if f.elem == "string":
        return "std::string"
    if f.elem == "bytes":
        return "std::vector<uint8_t>"
    if f.elem == "uuid":
        return "Uuid"
    return f.elem


def base_cpp(f):
    if f.kind == "primitive":
        return PRIMITIVES[f.type][0]
    if f.kind == "string":
        return "std::string"
    if f.kind == "bytes":
        return "std::vector<uint8_t>"
    if f.kind == "records":
        return "Records"
    if f.kind == "uuid":
        return "Uuid"
    if f.kind == "struct":
        return f.elem
    return "std::vector<%s>" % elem_cpp(f)


def field_cpp(f):
    t = base_cpp(f)
    return "std::optional<%s>" % t if f.nullable else t


def int_literal(type_name, value):
    lo, hi = INT_LIMITS[type_name]
    if not lo <= value <= hi:
        raise GenError("default %d out of range for %s" % (value, type_name))
    cpp = PRIMITIVES[type_name][0]
    if value == lo and lo < 0:
        return "std::numeric_limits<%s>::min()" % cpp
    if type_name == "int64" and not -(1 << 31) <= value < (1 << 31):
        return "INT64_C(%d)" % value
    if type_name == "uint32":
        return "%du" % value
    return "%d" % value


def cpp_string_literal(s):
    out = '"'
    for ch in s:
        if ch in '"\\':
            out += "\\" + ch
        elif 32 <= ord(ch) < 127:
            out += ch
        else:
            out += "".join("\\x%02x" % b for b in ch.encode("utf-8"))
    return out + '"'


def default_value(f, owner):
    """(initializer or None, is_default(expr) -> C++ bool expression)."""
    d = f.default
    if f.kind == "primitive":
        if f.type == "bool":
            v = "false"
            if d is not None:
                if str(d).lower() not in ("true", "false"):
                    raise GenError("%s.%s: bad bool default %r" % (owner, f.json_name, d))
                v = str(d).lower()
            return v, (lambda e: e) if v == "true" else (lambda e: "!%s" % e)
        if f.type == "float64":
            v = float(d) if d not in (None, "") else 0.0
            lit = repr(v)
            return lit, lambda e: "%s == %s" % (e, lit)
        v = int(str(d), 0) if d not in (None, "") else 0
        lit = int_literal(f.type, v)
        return lit, lambda e: "%s == %s" % (e, lit)
    if f.kind == "string":
        if d == "null":
            if not (f.nullable and f.nullable_versions.covers(f.versions)):
                raise GenError("%s.%s: null default but not nullable in all versions" % (owner, f.json_name))
            return None, lambda e: "!%s" % e
        text = d if d is not None else ""
        if f.nullable:
            if text == "":
                return "std::in_place", lambda e: "(%s && %s->empty())" % (e, e)
            lit = cpp_string_literal(text)
            return "std::in_place, " + lit, lambda e: "%s == %s" % (e, lit)
        if text == "":
            return None, lambda e: "%s.empty()" % e
        lit = cpp_string_literal(text)
        return lit, lambda e: "%s == %s" % (e, lit)
    if f.kind in ("bytes", "array"):
        if d not in (None, "", "null"):
            raise GenError("%s.%s: %s cannot have a default" % (owner, f.json_name, f.kind))
        if f.nullable:
            if d == "null":
                return None, lambda e: "!%s" % e
            return "std::in_place", lambda e: "(%s && %s->empty())" % (e, e)
        if d == "null":
            raise GenError("%s.%s: null default but not nullable" % (owner, f.json_name))
        return None, lambda e: "%s.empty()" % e
    if f.kind == "records":
        if f.nullable:
            return None, lambda e: "!%s" % e
        return None, lambda e: "%s.empty()" % e
    if f.kind == "uuid":
        return None, lambda e: "%s.is_zero()" % e
    # struct
    if f.nullable:
        if d == "null":
            return None, lambda e: "!%s" % e
        return "std::in_place", lambda e: "(%s && *%s == %s{})" % (e, e, f.elem)
    return None, lambda e: "%s == %s{}" % (e, f.elem)


def negate(expr):
    """!expr, without a double negation for simple "!name" expressions."""
    if re.fullmatch(r"![A-Za-z_][A-Za-z0-9_]*", expr):
        return expr[1:]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.>()-]*", expr):
        return "!" + expr
    return "!(%s)" % expr


def flex_expr(msg, f, ctx):
    flexible = f.flexible_override if f.flexible_override is not None else msg.flexible
    c = condition(flexible, ctx)
    if c in ("true", "false"):
        return c
    if f.flexible_override is None:
        return "flexible"
    return "(%s)" % c


def scalar_min_size(kind, type_name, flexible):
    if kind in PRIMITIVES:
        return PRIMITIVES[kind][2]
    if kind == "uuid":
        return 16
    if kind == "string":
        return 1 if flexible else 2
    if kind in ("bytes", "records", "array"):
        return 1 if flexible else 4
    raise GenError("no size for %s" % type_name)


def struct_min_size(msg, struct, version, depth=0):
    if depth > 16:
        raise GenError("%s: struct nesting too deep" % msg.name)
    total = 0
    msg_flexible = msg.flexible.contains(version)
    for f in struct.fields:
        if not f.versions.contains(version) or f.tagged_versions.contains(version):
            continue
        flexible = (f.flexible_override.contains(version) if f.flexible_override is not None else msg_flexible)
        if f.kind == "primitive":
            total += PRIMITIVES[f.type][2]
        elif f.kind == "struct":
            if f.nullable_versions.contains(version):
                total += 1
            else:
                total += struct_min_size(msg, f.struct, version, depth + 1)
        else:
            total += scalar_min_size(f.kind if f.kind != "array" else "array", f.type, flexible)
    if msg_flexible:
        total += 1  # tagged-field count
    return total


def array_elem_min_size(msg, f, ctx):
    if f.elem in PRIMITIVES:
        return PRIMITIVES[f.elem][2]
    present = f.versions.intersect(ctx)
    if f.elem in ("string", "bytes", "uuid"):
        sizes = [scalar_min_size(f.elem, f.elem, msg.flexible.contains(v)) for v in present]
    else:
        sizes = [struct_min_size(msg, f.struct, v) for v in present]
    return max(1, min(sizes)) if sizes else 1


# ---------------------------------------------------------------------------
# Emitting the codec
# ---------------------------------------------------------------------------


class Out:
    def __init__(self):
        self.lines = []
        self.indent = 0

    def __call__(self, line=""):
        self.lines.append(("  " * self.indent + line) if line else "")

    def block(self, head):
        self(head + " {")
        self.indent += 1

    def end(self, tail="}"):
        self.indent -= 1
        self(tail)

    def text(self):
        return "\n".join(self.lines) + "\n"


def emit_decode_value(o, msg, f, target, flex, ctx, nullable_cond):
    """Statements decoding field f (present in this version) into target."""
    k = f.kind
    if k == "primitive":
        o("%s = r.read_%s();" % (target, PRIMITIVES[f.type][1]))
    elif k == "uuid":
        o("%s = r.read_uuid();" % target)
    elif k in ("string", "bytes", "records"):
        if f.nullable:
            o("%s = r.read_nullable_%s(%s, %s);" % (target, k, flex, nullable_cond))
        else:
            o("%s = r.read_%s(%s);" % (target, k, flex))
    elif k == "struct":
        if f.nullable:
            o.block("if (r.read_struct_marker(%s))" % nullable_cond)
            o("%s.emplace();" % target)
            o("%s->decode(r, version);" % target)
            o.end("} else {")
            o.indent += 1
            o("%s.reset();" % target)
            o.end()
        else:
            o("%s.decode(r, version);" % target)
    else:  # array
        min_size = array_elem_min_size(msg, f, ctx)
        o("{")
        o.indent += 1
        if f.nullable:
            o("const int32_t n = r.read_array_length(%s, %d, %s);" % (flex, min_size, nullable_cond))
            o.block("if (n < 0)")
            o("%s.reset();" % target)
            o.end("} else {")
            o.indent += 1
            o("%s.emplace();" % target)
            vec = "(*%s)" % target
        else:
            o("const int32_t n = r.read_array_length(%s, %d);" % (flex, min_size))
            vec = target
        o("%sresize(static_cast<size_t>(n));" % (target + "->" if f.nullable else target + "."))
        o.block("for (int32_t i = 0; i < n; ++i)")
        o("r.enter(i);")
        elem = "%s[static_cast<size_t>(i)]" % vec
        if f.elem in PRIMITIVES:
            o("%s = r.read_%s();" % (elem, PRIMITIVES[f.elem][1]))
        elif f.elem == "string":
            o("%s = r.read_string(%s);" % (elem, flex))
        elif f.elem == "bytes":
            o("%s = r.read_bytes(%s);" % (elem, flex))
        elif f.elem == "uuid":
            o("%s = r.read_uuid();" % elem)
        else:
            o("%s.decode(r, version);" % elem)
        o("r.leave();")
        o.end()
        if f.nullable:
            o.end()
        o.end()


def emit_encode_value(o, msg, f, value, flex, nullable_cond, wname, label):
    """Statements encoding field f (present in this version) from value."""
    k = f.kind
    if k == "primitive":
        o("%s.write_%s(%s);" % (wname, PRIMITIVES[f.type][1], value))
    elif k == "uuid":
        o("%s.write_uuid(%s);" % (wname, value))
    elif k in ("string", "bytes", "records"):
        if f.nullable:
            extra = "" if nullable_cond == "true" else ", %s" % label
            o("%s.write_nullable_%s(%s, %s, %s%s);" % (wname, k, value, flex, nullable_cond, extra))
        else:
            o("%s.write_%s(%s, %s);" % (wname, k, value, flex))
    elif k == "struct":
        if f.nullable:
            extra = "" if nullable_cond == "true" else ", %s" % label
            o("%s.write_struct_marker(%s.has_value(), %s%s);" % (wname, value, nullable_cond, extra))
            o("if (%s) %s->encode(%s, version);" % (value, value, wname))
        else:
            o("%s.encode(%s, version);" % (value, wname))
    else:  # array
        if f.nullable:
            extra = "" if nullable_cond == "true" else ", %s" % label
            o.block("if (!%s)" % value)
            o("%s.write_null_array(%s, %s%s);" % (wname, flex, nullable_cond, extra))
            o.end("} else {")
            o.indent += 1
            vec = "*%s" % value
            size = "%s->size()" % value
        else:
            vec = value
            size = "%s.size()" % value
        o("%s.write_array_length(%s, %s);" % (wname, size, flex))
        if f.elem in PRIMITIVES:
            o("for (%s e : %s) %s.write_%s(e);" % (PRIMITIVES[f.elem][0], vec, wname, PRIMITIVES[f.elem][1]))
        elif f.elem == "string":
            o("for (const std::string& e : %s) %s.write_string(e, %s);" % (vec, wname, flex))
        elif f.elem == "bytes":
            o("for (const std::vector<uint8_t>& e : %s) %s.write_bytes(e, %s);" % (vec, wname, flex))
        elif f.elem == "uuid":
            o("for (const Uuid& e : %s) %s.write_uuid(e);" % (vec, wname))
        else:
            o("for (const %s& e : %s) e.encode(%s, version);" % (f.elem, vec, wname))
        if f.nullable:
            o.end()


def field_comment(f):
    parts = ["versions " + str(f.versions)]
    if f.nullable:
        parts.append("nullable " + str(f.nullable_versions))
    if f.tag is not None:
        parts.append("tag %d in %s" % (f.tag, f.tagged_versions))
    if f.ignorable:
        parts.append("ignorable")
    return "; ".join(parts)


def is_error_code(f):
    """An error code field: int16 named ErrorCode or ...ErrorCode."""
    return f.kind == "primitive" and f.type == "int16" and f.json_name.endswith("ErrorCode")


def holds_error_codes(struct):
    return any(is_error_code(f) or (f.struct_elem() and holds_error_codes(f.struct)) for f in struct.fields)


def emit_error_code_visitor(o, struct):
    """for_each_error_code(f): f(code) for every error code field of a
    response, nested ones included. Fields of versions the message was not
    decoded or built for hold their default, 0 (NONE)."""
    o("// f(code) for every error code field (...ErrorCode) here and in nested")
    o("// structs; a field absent in a version holds 0 (NONE).")
    o("template <typename F>")
    o.block("void for_each_error_code(F&& f) const")
    for f in struct.fields:
        if is_error_code(f):
            o("f(%s);" % f.name)
        elif f.struct_elem() and holds_error_codes(f.struct):
            value = "(*%s)" % f.name if f.nullable else f.name
            guard = "if (%s) " % f.name if f.nullable else ""
            if f.kind == "array":
                o("%sfor (const auto& e : %s) e.for_each_error_code(f);" % (guard, value))
            else:
                o("%s%s.for_each_error_code(f);" % (guard, value))
    o.end("}")


def emit_struct_decl(o, msg, struct, is_root):
    if is_root:
        o.block("struct %s" % struct.name)
        o("static constexpr const char* kName = %s;" % cpp_string_literal(msg.name))
        if msg.api_key is not None:
            o("static constexpr int16_t kApiKey = %d;" % msg.api_key)
        o("static constexpr int16_t kMinVersion = %d;" % msg.valid.lo)
        o("static constexpr int16_t kMaxVersion = %d;" % msg.valid.hi)
        flex = msg.flexible.intersect(msg.valid)
        o("// First flexible version (compact encodings, tagged fields); kMaxVersion + 1 when none.")
        o("static constexpr int16_t kFirstFlexibleVersion = %d;"
          % (flex.lo if not flex.empty() else msg.valid.hi + 1))
        o()
        for s in msg.structs:
            emit_struct_decl(o, msg, s, False)
            o()
    else:
        o.block("struct %s" % struct.name)
    for f in struct.fields:
        init, _ = default_value(f, struct.name)
        decl = "%s %s" % (field_cpp(f), f.name)
        if init is not None:
            decl += "{%s}" % init if init.startswith("std::in_place") else " = %s" % init
        o("%s;  // %s" % (decl, field_comment(f)))
    if msg.has_flexible():
        o("std::vector<TaggedField> unknown_tagged_fields;")
    o()
    o("void decode(Reader& r, int16_t version);")
    o("void encode(Writer& w, int16_t version) const;")
    o("bool operator==(const %s&) const = default;" % struct.name)
    if msg.kind == "response" and holds_error_codes(struct):
        emit_error_code_visitor(o, struct)
    o.end("};")


def split_versions(f, ctx):
    """(plain, tagged): the versions in ctx where f is a regular field and
    where it is a tagged field."""
    regular = f.versions.intersect(ctx)
    tagged = f.tagged_versions.intersect(regular)
    if tagged.empty():
        return regular, tagged
    if tagged.hi != regular.hi:
        raise GenError("%s: taggedVersions of %s must be open-ended" % (ctx, f.json_name))
    return Versions(regular.lo, tagged.lo - 1), tagged


def emit_struct_defs(o, msg, struct):
    ctx = struct.ctx
    q = struct.qualified
    flexible_cond = condition(msg.flexible, ctx)
    tagged_fields = struct.tagged_fields()
    with_tags = msg.has_flexible() and flexible_cond != "false"

    # --- decode ---
    o.block("void %s::decode(Reader& r, int16_t version)" % q)
    if flexible_cond not in ("true", "false"):
        o("const bool flexible = %s;" % flexible_cond)
    for f in struct.fields:
        plain, _ = split_versions(f, ctx)
        cond = condition(plain, ctx)
        if cond == "false":
            continue
        flex = flex_expr(msg, f, ctx)
        nullable_cond = condition(f.nullable_versions, plain) if f.nullable else "false"
        if cond != "true":
            o.block("if (%s)" % cond)
        o('r.field("%s");' % f.name)
        emit_decode_value(o, msg, f, f.name, flex, ctx, nullable_cond)
        if cond != "true":
            o.end()
    if with_tags:
        if flexible_cond != "true":
            o.block("if (flexible)")
        known = [(f, split_versions(f, ctx)[1]) for f in tagged_fields]
        known = [(f, tv) for f, tv in known if not tv.empty()]
        if known:
            o("Reader::TagSection tags = r.read_tag_section();")
            o.block("for (uint32_t j = 0; j < tags.count && r.ok(); ++j)")
            o("const Reader::Tag t = r.begin_tag(&tags);")
            for n, (f, tv) in enumerate(known):
                c = condition(tv, ctx)
                test = "t.tag == %d%s" % (f.tag, "" if c == "true" else " && " + c)
                if n == 0:
                    o.block("if (%s)" % test)
                else:
                    o.end("} else if (%s) {" % test)
                    o.indent += 1
                o('r.field("%s");' % f.name)
                nullable_cond = condition(f.nullable_versions, tv) if f.nullable else "false"
                emit_decode_value(o, msg, f, f.name, "true", ctx, nullable_cond)
            o.end("} else {")
            o.indent += 1
            o("r.read_unknown_tag(t, &unknown_tagged_fields);")
            o.end()
            o("r.end_tag(t);")
            o.end()
        else:
            o("r.read_tagged_fields(&unknown_tagged_fields);")
        if flexible_cond != "true":
            o.end()
    o.end()
    o()

    # --- encode ---
    o.block("void %s::encode(Writer& w, int16_t version) const" % q)
    if flexible_cond not in ("true", "false"):
        o("const bool flexible = %s;" % flexible_cond)
    for f in struct.fields:
        _, is_default = default_value(f, struct.name)
        label = cpp_string_literal("%s.%s" % (q.replace("::", "."), f.name))
        plain, tagged = split_versions(f, ctx)
        cond = condition(plain, ctx)
        present = f.versions.intersect(ctx)
        # A non-ignorable field must not lose a value in versions without it.
        check_absent = not f.ignorable and not present.covers(ctx)
        nondefault = negate(is_default(f.name))
        if cond != "false":
            flex = flex_expr(msg, f, ctx)
            nullable_cond = condition(f.nullable_versions, plain) if f.nullable else "false"
            if cond != "true":
                o.block("if (%s)" % cond)
            emit_encode_value(o, msg, f, f.name, flex, nullable_cond, "w", label)
            if cond != "true":
                if check_absent and tagged.empty():
                    o.end("} else if (%s) {" % nondefault)
                    o.indent += 1
                    o("w.not_representable(%s, version);" % label)
                    check_absent = False
                o.end()
        if check_absent:
            pc = condition(present, ctx)
            test = nondefault if pc == "false" else "%s && %s" % (negate(pc), nondefault)
            o("if (%s) w.not_representable(%s, version);" % (test, label))
    if with_tags:
        if flexible_cond != "true":
            o.block("if (flexible)")
        known = [(f, split_versions(f, ctx)[1]) for f in tagged_fields]
        known = [(f, tv) for f, tv in known if not tv.empty()]
        if known:
            o("TaggedFieldsWriter tags(w, unknown_tagged_fields);")
            for f, tv in known:
                _, is_default = default_value(f, struct.name)
                label = cpp_string_literal("%s.%s" % (q.replace("::", "."), f.name))
                c = condition(tv, ctx)
                o.block("if (%s%s)" % ("" if c == "true" else c + " && ", negate(is_default(f.name))))
                o("Writer& t = tags.add(%d);" % f.tag)
                nullable_cond = condition(f.nullable_versions, tv) if f.nullable else "false"
                emit_encode_value(o, msg, f, f.name, "true", nullable_cond, "t", label)
                o.end()
            o("tags.finish();")
        else:
            o("w.write_tagged_fields(unknown_tagged_fields);")
        if flexible_cond != "true":
            o.end()
    o.end()
    o()


def emit_message_header(o, msg):
    emit_struct_decl(o, msg, msg.root, True)


def emit_message_source(o, msg):
    for s in msg.structs:
        emit_struct_defs(o, msg, s)
    emit_struct_defs(o, msg, msg.root)


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    if old != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def generate_pair(stem, messages, sources_note):
    h = Out()
    h(BANNER.format(sources=sources_note).rstrip("\n"))
    h("#pragma once")
    h()
    h("#include <cstdint>")
    h("#include <limits>")
    h("#include <optional>")
    h("#include <string>")
    h("#include <vector>")
    h()
    h('#include "protocol/wire.h"')
    h()
    h("namespace eddy::protocol {")
    h()
    for m in messages:
        emit_message_header(h, m)
        h()
    h("}  // namespace eddy::protocol")

    c = Out()
    c(BANNER.format(sources=sources_note).rstrip("\n"))
    c('#include "protocol/generated/%s.h"' % stem)
    c()
    c("namespace eddy::protocol {")
    c()
    for m in messages:
        emit_message_source(c, m)
    c("}  // namespace eddy::protocol")
    write_file(os.path.join(SRC_OUT, stem + ".h"), h.text())
    write_file(os.path.join(SRC_OUT, stem + ".cc"), c.text())


# ---------------------------------------------------------------------------
# API table
# ---------------------------------------------------------------------------


def generate_api_table(pairs):
    o = Out()
    o(BANNER.format(sources="the API list in generate.py").rstrip("\n"))
    o("#pragma once")
    o()
    o("#include <cstdint>")
    o()
    o("namespace eddy::protocol {")
    o()
    o("enum class ApiKey : int16_t {")
    for stem, req, resp in sorted(pairs, key=lambda p: p[1].api_key):
        o("  k%s = %d," % (req.name[: -len("Request")], req.api_key))
    o("};")
    o()
    o("// What the codec implements for one API.")
    o("struct ApiInfo {")
    o("  int16_t api_key;")
    o("  const char* name;")
    o("  int16_t min_version;")
    o("  int16_t max_version;")
    o("  // First flexible version of the request / response (max_version + 1 when none).")
    o("  int16_t request_first_flexible;")
    o("  int16_t response_first_flexible;")
    o("};")
    o()
    o("// Sorted by api_key.")
    o("inline constexpr ApiInfo kGeneratedApis[] = {")
    for stem, req, resp in sorted(pairs, key=lambda p: p[1].api_key):
        if (req.valid.lo, req.valid.hi) != (resp.valid.lo, resp.valid.hi):
            raise GenError("%s: request and response versions differ" % req.name)
        hi = req.valid.hi - (1 if req.latest_unstable else 0)
        rf = req.flexible.intersect(req.valid)
        sf = resp.flexible.intersect(resp.valid)
        o('    {%d, "%s", %d, %d, %d, %d},' % (
            req.api_key, req.name[: -len("Request")], req.valid.lo, hi,
            rf.lo if not rf.empty() else hi + 1, sf.lo if not sf.empty() else hi + 1))
    o("};")
    o()
    o("// X(Request, Response) for every generated API.")
    o("#define EDDY_PROTOCOL_FOR_EACH_API(X) \\")
    items = sorted(pairs, key=lambda p: p[1].api_key)
    for i, (stem, req, resp) in enumerate(items):
        o("  X(%s, %s)%s" % (req.name, resp.name, " \\" if i + 1 < len(items) else ""))
    o()
    o("}  // namespace eddy::protocol")
    write_file(os.path.join(SRC_OUT, "apis.h"), o.text())


# ---------------------------------------------------------------------------
# Test-only code: filling every field with non-default values
# ---------------------------------------------------------------------------


def emit_fill_value(o, msg, f, target, ctx, nullable_cond):
    k = f.kind
    init, _ = default_value(f, "")
    inner = target
    if f.nullable:
        o.block("if (f.make_null()%s)" % ("" if nullable_cond == "true" else " && (%s)" % nullable_cond))
        o("%s.reset();" % target)
        o.end("} else {")
        o.indent += 1
        if k in ("struct", "array"):
            o("%s.emplace();" % target)
            inner = "(*%s)" % target
    if k == "primitive":
        if f.type == "bool":
            o("%s = !%s;" % (inner, init))
        elif f.type == "float64":
            o("%s = f.next_float64(%s);" % (inner, init))
        else:
            o("%s = f.next_int<%s>(%s);" % (inner, PRIMITIVES[f.type][0], init))
    elif k == "string":
        o("%s = f.next_string();" % inner)
    elif k == "bytes":
        o("%s = f.next_bytes();" % inner)
    elif k == "records":
        o("%s = f.next_records();" % inner)
    elif k == "uuid":
        o("%s = f.next_uuid();" % inner)
    elif k == "struct":
        o("fill_test_values(%s, version, f);" % inner)
    else:
        o("%s.resize(f.array_size());" % inner)
        if f.elem in PRIMITIVES:
            if f.elem == "bool":
                o("for (size_t i = 0; i < %s.size(); ++i) %s[i] = (i %% 2 == 0);" % (inner, inner))
            elif f.elem == "float64":
                o("for (auto& e : %s) e = f.next_float64(0);" % inner)
            else:
                o("for (auto& e : %s) e = f.next_int<%s>(0);" % (inner, PRIMITIVES[f.elem][0]))
        elif f.elem == "string":
            o("for (auto& e : %s) e = f.next_string();" % inner)
        elif f.elem == "bytes":
            o("for (auto& e : %s) e = f.next_bytes();" % inner)
        elif f.elem == "uuid":
            o("for (auto& e : %s) e = f.next_uuid();" % inner)
        else:
            o("for (auto& e : %s) fill_test_values(e, version, f);" % inner)
    if f.nullable:
        o.end()


def generate_tests(all_messages, pairs):
    h = Out()
    h(BANNER.format(sources="the message list in generate.py").rstrip("\n"))
    h("// Test-only: fill_test_values() sets every field present in a version to a")
    h("// non-default value (and, when the Filler asks for nulls, every field nullable")
    h("// in that version to null), so round trips exercise every field.")
    h("#pragma once")
    h()
    h("#include <cstdint>")
    h("#include <span>")
    h()
    h('#include "protocol/generated/messages.h"')
    h('#include "protocol/wire.h"')
    h('#include "test_filler.h"')
    h()
    h("namespace eddy::protocol::testing {")
    h()
    for m in all_messages:
        for s in m.structs:
            h("void fill_test_values(%s& m, int16_t version, Filler& f);" % s.qualified)
        h("void fill_test_values(%s& m, int16_t version, Filler& f);" % m.name)
    h()
    h("// Decode a request or response body of any generated API (for the fuzzers).")
    h("// When decoding succeeds, they also re-encode the message and decode the")
    h("// result, setting *reencode_ok to whether the two decoded messages are equal.")
    h("// Unknown api keys are an error.")
    h("Status decode_any_request(int16_t api_key, int16_t version, std::span<const uint8_t> body,")
    h("                          bool* reencode_ok);")
    h("Status decode_any_response(int16_t api_key, int16_t version, std::span<const uint8_t> body,")
    h("                           bool* reencode_ok);")
    h()
    h("}  // namespace eddy::protocol::testing")
    write_file(os.path.join(TEST_OUT, "test_messages.h"), h.text())

    c = Out()
    c(BANNER.format(sources="the message list in generate.py").rstrip("\n"))
    c('#include "test_messages.h"')
    c()
    c("#include <algorithm>")
    c()
    c('#include "protocol/codec.h"')
    c()
    c("namespace eddy::protocol::testing {")
    c()
    for m in all_messages:
        for s in m.structs + [m.root]:
            c.block("void fill_test_values(%s& m, int16_t version, Filler& f)" % s.qualified)
            for fld in s.fields:
                present = condition(fld.versions, s.ctx)
                if present == "false":
                    continue
                nullable_cond = (condition(fld.nullable_versions, fld.versions.intersect(s.ctx))
                                 if fld.nullable else "false")
                if present != "true":
                    c.block("if (%s)" % present)
                emit_fill_value(c, m, fld, "m." + fld.name, s.ctx, nullable_cond)
                if present != "true":
                    c.end()
            c.end()
            c()
    c("namespace {")
    c()
    c("template <typename M>")
    c("Status decode_and_check(int16_t version, std::span<const uint8_t> body, bool* reencode_ok) {")
    c("  M first;")
    c("  Status s = decode(body, version, &first);")
    c("  *reencode_ok = true;")
    c("  if (!s.ok()) return s;")
    c("  OutputBuffer out;")
    c("  Status e = encode(first, version, &out);")
    c("  M second;")
    c("  Status d = decode(std::span<const uint8_t>(out.memory(), out.memory_size()), version, &second);")
    c("  *reencode_ok = e.ok() && d.ok() && !out.has_file_regions();")
    c("  if (*reencode_ok && !(first == second)) {")
    c("    // A float64 NaN (DescribeClientQuotas values) is unequal to itself, so")
    c("    // structs holding one never compare equal: then the re-encoding of the")
    c("    // second decode must give the same bytes as the first encoding.")
    c("    OutputBuffer again;")
    c("    *reencode_ok = encode(second, version, &again).ok() && again.memory_size() == out.memory_size() &&")
    c("                   std::equal(out.memory(), out.memory() + out.memory_size(), again.memory());")
    c("  }")
    c("  return s;")
    c("}")
    c()
    c("}  // namespace")
    c()
    for which, pad, idx in (("request", "", 1), ("response", " ", 2)):
        c("Status decode_any_%s(int16_t api_key, int16_t version, std::span<const uint8_t> body," % which)
        c("                          %sbool* reencode_ok) {" % pad)
        c("  switch (api_key) {")
        for pair in sorted(pairs, key=lambda p: p[1].api_key):
            c("    case %s::kApiKey:" % pair[idx].name)
            c("      return decode_and_check<%s>(version, body, reencode_ok);" % pair[idx].name)
        c("    default:")
        c("      *reencode_ok = true;")
        c('      return Status::protocol_error("unknown api key " + std::to_string(api_key));')
        c("  }")
        c("}")
        c()
    c("}  // namespace eddy::protocol::testing")
    write_file(os.path.join(TEST_OUT, "test_messages.cc"), c.text())

    o = Out()
    o(BANNER.format(sources="the message list in generate.py").rstrip("\n"))
    o("// X(Message) for every generated message type, for the round-trip tests.")
    o("#pragma once")
    o()
    o("#define EDDY_PROTOCOL_FOR_EACH_MESSAGE(X) \\")
    for i, m in enumerate(all_messages):
        o("  X(%s)%s" % (m.name, " \\" if i + 1 < len(all_messages) else ""))
    write_file(os.path.join(TEST_OUT, "message_list.h"), o.text())


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    messages_dir = argv[1]
    groups = []  # (stem, [Message])
    pairs = []
    for stem, base in APIS:
        req = Message(load_definition(messages_dir, base + "Request"))
        resp = Message(load_definition(messages_dir, base + "Response"))
        if req.api_key != resp.api_key or req.kind != "request" or resp.kind != "response":
            raise GenError("%s: request/response mismatch" % base)
        groups.append((stem, [req, resp]))
        pairs.append((stem, req, resp))
    for stem, names in (HEADERS, DATA_TYPES, CONTROL_RECORDS):
        groups.append((stem, [Message(load_definition(messages_dir, n)) for n in names]))
    records_dir = os.path.join(REPO_ROOT, "src", "protocol", "records")
    stem, names = EDDY_RECORDS
    groups.append((stem, [Message(load_definition(records_dir, n)) for n in names]))

    all_messages = []
    generated = []
    for stem, msgs in groups:
        note = ", ".join(m.name + ".json" for m in msgs)
        generate_pair(stem, msgs, note)
        generated.append(stem)
        all_messages.extend(msgs)

    generate_api_table(pairs)

    o = Out()
    o(BANNER.format(sources="the message list in generate.py").rstrip("\n"))
    o("// Every generated message type.")
    o("#pragma once")
    o()
    o('#include "protocol/generated/apis.h"')
    for stem in generated:
        o('#include "protocol/generated/%s.h"' % stem)
    write_file(os.path.join(SRC_OUT, "messages.h"), o.text())

    o = Out()
    o("# Generated by src/protocol/codegen/generate.py. Do not edit; regenerate.")
    o("set(EDDY_PROTOCOL_GENERATED_SOURCES")
    for stem in generated:
        o("  ${CMAKE_CURRENT_LIST_DIR}/%s.cc" % stem)
    o(")")
    write_file(os.path.join(SRC_OUT, "sources.cmake"), o.text())

    generate_tests(all_messages, pairs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except GenError as e:
        sys.stderr.write("generate.py: %s\n" % e)
        sys.exit(1)
