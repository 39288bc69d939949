#include "io/snapshot/detail/pickle.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>

#include "util/diagnostics.h"
#include "util/input.h"

using namespace lathe;
using namespace lathe::io;

namespace {

// A pickle literal with its embedded NUL bytes.
template <size_t N>
std::string bytesOf(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// pickle.dumps({'a': 1, 'b': [1.5, 2**40, -2**63, 2**64, None, True, False], 'c': ('x',), 'd': -300},
//              protocol=2), as CPython 3 writes it.
const std::string kProtocol2 = bytesOf(
    "\x80\x02}q\x00(X\x01\x00\x00\x00"
    "aq\x01K\x01X\x01\x00\x00\x00"
    "bq\x02]q\x03(G\x3f\xf8\x00\x00\x00\x00\x00\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x08\x00\x00\x00\x00\x00\x00\x00"
    "\x80\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01N\x88\x89"
    "eX\x01\x00\x00\x00"
    "cq\x04X\x01\x00\x00\x00xq\x05\x85q\x06X\x01\x00\x00\x00"
    "dq\x07J\xd4\xfe\xff\xffu.");

// lst = [1, 2]; s = 'shared'
// pickle.dumps({'l1': lst, 'l2': lst, 's1': s, 's2': s, 'big': 10**30, 'neg': -5, 'f': -0.25,
//               'nested': [[[]]], 't': (1,), 'set': {3}, 'fs': frozenset({4}), 'u': 'héllo',
//               'b': b'\x00\xff'}, protocol=4): FRAME, MEMOIZE, BINGET sharing, LONG1, sets.
const std::string kProtocol4 = bytesOf(
    "\x80\x04\x95\xa0\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x02l1\x94]\x94(K\x01K\x02"
    "e\x8c\x02l2\x94h\x02\x8c\x02s1\x94\x8c\x06shared\x94\x8c\x02s2\x94h\x05\x8c\x03"
    "big\x94\x8a\x0d\x00\x00\x00@\xea\xedtF\xd0\x9c,\x9f\x0c\x8c\x03neg\x94J\xfb\xff\xff\xff\x8c\x01"
    "f\x94G\xbf\xd0\x00\x00\x00\x00\x00\x00\x8c\x06nested\x94]\x94]\x94]\x94"
    "aa\x8c\x01t\x94K\x01\x85\x94\x8c\x03set\x94\x8f\x94(K\x03\x90\x8c\x02"
    "fs\x94(K\x04\x91\x94\x8c\x01u\x94\x8c\x06h\xc3\xa9llo\x94\x8c\x01"
    "b\x94"
    "C\x02\x00\xff\x94u.");

// Expects unpickle to refuse the input with BadInput and a message containing `fragment`.
void expectBadInput(const std::string& data, const std::string& fragment, const UnpickleLimits& limits = {}) {
  try {
    (void)unpickle(data, "test.pickle", {}, limits);
    ADD_FAILURE() << "accepted; expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

long maxRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

std::string samplePath(const std::string& rel) {
  return std::string(LATHE_SAMPLES_DIR) + "/" + rel;
}

}  // namespace

TEST(Pickle, Protocol2ScalarsAndContainers) {
  const PickleDocument doc = unpickle(kProtocol2);
  EXPECT_EQ(doc.protocol(), 2);
  const PyRef root = doc.root();
  ASSERT_TRUE(root.is(PyKind::Dict));
  ASSERT_EQ(root.size(), 4u);
  EXPECT_EQ(root.key(0).text(), "a");
  EXPECT_EQ(root.get("a").asInt(), 1);
  EXPECT_EQ(root.get("d").asInt(), -300);

  const PyRef b = root.get("b");
  ASSERT_TRUE(b.is(PyKind::List));
  ASSERT_EQ(b.size(), 7u);
  EXPECT_EQ(b.item(0).asFloat(), 1.5);  // BINFLOAT is big-endian
  EXPECT_EQ(b.item(1).asInt(), int64_t{1} << 40);
  EXPECT_EQ(b.item(2).asInt(), INT64_MIN);  // LONG1 of 8 bytes, sign bit set
  EXPECT_TRUE(b.item(3).is(PyKind::BigInt));
  EXPECT_EQ(b.item(3).intDecimal(), "18446744073709551616");  // 2**64 needs 9 bytes
  EXPECT_EQ(b.item(3).asUint64(), std::nullopt);
  EXPECT_TRUE(b.item(4).is(PyKind::None));
  EXPECT_EQ(b.item(5).asBool(), true);
  EXPECT_EQ(b.item(6).asBool(), false);

  const PyRef c = root.get("c");
  ASSERT_TRUE(c.is(PyKind::Tuple));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c.item(0).text(), "x");
  EXPECT_FALSE(root.get("missing"));
  EXPECT_EQ(pyRepr(root),
            "{'a': 1, 'b': [1.5, 1099511627776, -9223372036854775808, 18446744073709551616, None, True, False], "
            "'c': ('x',), 'd': -300}");
}

TEST(Pickle, Protocol4MemoSharingSetsAndBigInts) {
  const PickleDocument doc = unpickle(kProtocol4);
  EXPECT_EQ(doc.protocol(), 4);
  const PyRef root = doc.root();
  ASSERT_EQ(root.size(), 13u);
  // The memo shares objects: both keys refer to the same list and the same string.
  EXPECT_EQ(root.get("l1").id(), root.get("l2").id());
  EXPECT_EQ(root.get("s1").id(), root.get("s2").id());
  EXPECT_EQ(root.get("s2").text(), "shared");
  EXPECT_EQ(root.get("big").intDecimal(), "1000000000000000000000000000000");
  EXPECT_EQ(root.get("neg").asInt(), -5);
  EXPECT_EQ(root.get("f").asFloat(), -0.25);
  const PyRef nested = root.get("nested");
  ASSERT_EQ(nested.size(), 1u);
  ASSERT_EQ(nested.item(0).size(), 1u);
  EXPECT_EQ(nested.item(0).item(0).size(), 0u);
  EXPECT_TRUE(root.get("set").is(PyKind::Set));
  EXPECT_TRUE(root.get("fs").is(PyKind::FrozenSet));
  EXPECT_EQ(root.get("u").text(), "h\xc3\xa9llo");
  EXPECT_EQ(root.get("b").text(), std::string("\x00\xff", 2));
  // Python's own repr of the same value.
  EXPECT_EQ(
      pyRepr(root),
      "{'l1': [1, 2], 'l2': [1, 2], 's1': 'shared', 's2': 'shared', 'big': 1000000000000000000000000000000, "
      "'neg': -5, 'f': -0.25, 'nested': [[[]]], 't': (1,), 'set': {3}, 'fs': frozenset({4}), 'u': 'h\xc3\xa9llo', "
      "'b': b'\\x00\\xff'}");
}

TEST(Pickle, OtherPlainDataOpcodes) {
  // pickle.dumps(bytearray(b'ab'), protocol=5): FRAME + BYTEARRAY8.
  EXPECT_EQ(unpickle(bytesOf("\x80\x05\x95\x0d\x00\x00\x00\x00\x00\x00\x00\x96\x02\x00\x00\x00\x00\x00\x00\x00"
                             "ab\x94."))
                .root()
                .text(),
            "ab");
  // Protocol 1 strings (SHORT_BINSTRING, BINSTRING) read as str, BINBYTES and SHORT_BINBYTES as bytes.
  const PickleDocument strings =
      unpickle(bytesOf("(U\x03"
                       "abcT\x02\x00\x00\x00"
                       "deB\x01\x00\x00\x00"
                       "fC\x00t."));
  ASSERT_EQ(strings.root().size(), 4u);
  EXPECT_TRUE(strings.root().item(0).is(PyKind::String));
  EXPECT_EQ(strings.root().item(1).text(), "de");
  EXPECT_TRUE(strings.root().item(2).is(PyKind::Bytes));
  EXPECT_EQ(strings.root().item(3).text(), "");
  // LONG4 holding -(10**30) (13 bytes, two's complement), BININT2, DUP, POP, POP_MARK, TUPLE3,
  // MARK + LIST / DICT (protocol 1 style builders).
  const PickleDocument misc =
      unpickle(bytesOf("\x80\x02(\x8b\x0d\x00\x00\x00\x00\x00\x00\xc0\x15\x12\x8b\xb9\x2f\x63\xd3\x60\xf3"
                       "M\x00\x01"
                       "2"
                       "K\x07"
                       "0"
                       "(K\x01K\x02"
                       "1"
                       "N\x88\x89\x87"
                       "(K\x01K\x02l"
                       "(X\x01\x00\x00\x00kK\x05"
                       "d"
                       "t."));
  const PyRef t = misc.root();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t.item(0).intDecimal(), "-1000000000000000000000000000000");
  EXPECT_EQ(t.item(1).asInt(), 256);
  EXPECT_EQ(t.item(2).id(), t.item(1).id());  // DUP pushes the same object
  EXPECT_EQ(pyRepr(t.item(3)), "(None, True, False)");
  EXPECT_EQ(pyRepr(t.item(4)), "[1, 2]");
  EXPECT_EQ(pyRepr(t.item(5)), "{'k': 5}");
  // A key written twice: both pairs are kept in order, get() answers the last like Python.
  const PickleDocument twice = unpickle(bytesOf("}(X\x01\x00\x00\x00kK\x01X\x01\x00\x00\x00kK\x02u."));
  EXPECT_EQ(twice.root().size(), 2u);
  EXPECT_EQ(twice.root().get("k").asInt(), 2);
}

TEST(Pickle, InterleavedAppendsKeepTheirOrder) {
  // a = []; b = []; a.append(1); b.append(2); a.append(3); a.extend([4, 5]) -> (a, b)
  const PickleDocument doc =
      unpickle(bytesOf("\x80\x02]q\x00]q\x01"
                       "0K\x01"
                       "ah\x01K\x02"
                       "a0K\x03"
                       "a(K\x04K\x05"
                       "eh\x01\x86."));
  EXPECT_EQ(pyRepr(doc.root()), "([1, 3, 4, 5], [2])");
}

TEST(Pickle, ReprQuotesAndFloatsLikePython) {
  // pickle.dumps(["it's", 'say "hi"', 1e16, 1e-05, 100.0, float('inf')], protocol=2), built by hand.
  std::string data = bytesOf(
      "\x80\x02](X\x04\x00\x00\x00it's"
      "X\x08\x00\x00\x00say \"hi\"");
  for (uint64_t bits : {0x4341c37937e08000ull, 0x3ee4f8b588e368f1ull, 0x4059000000000000ull, 0x7ff0000000000000ull}) {
    data += 'G';
    for (int shift = 56; shift >= 0; shift -= 8) data += static_cast<char>((bits >> shift) & 0xff);
  }
  data += "e.";
  EXPECT_EQ(pyRepr(unpickle(data).root()), "[\"it's\", 'say \"hi\"', 1e+16, 1e-05, 100.0, inf]");
}

TEST(Pickle, ReprIsAlwaysValidUtf8) {
  // ['a\xffb\u00e9', 'é' * 5]: the first str holds a byte that is not UTF-8 (written by hand).
  const PickleDocument doc =
      unpickle(bytesOf("](X\x05\x00\x00\x00"
                       "a\xff"
                       "b\xc3\xa9X\x0a\x00\x00\x00\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                       "e."));
  EXPECT_EQ(pyRepr(doc.root().item(0)), "'a\\xffb\xc3\xa9'");
  // Cut at 4 bytes: the quote and one whole 'é', never half of one.
  EXPECT_EQ(pyRepr(doc.root().item(1), 4), "'\xc3\xa9...");
  EXPECT_EQ(utf8SequenceLength("\xed\xa0\x80", 0), 0u);  // a surrogate
  EXPECT_EQ(utf8SequenceLength("\xc0\x80", 0), 0u);      // overlong
  EXPECT_EQ(utf8SequenceLength("\xf0\x9f\x98\x80", 0), 4u);
}

TEST(Pickle, RefusesEverythingThatNamesOrCallsCode) {
  // pickle.dumps(collections.OrderedDict(), protocol=2) and protocol=4.
  expectBadInput(bytesOf("\x80\x02"
                         "ccollections\x0aOrderedDict\x0aq\x00)Rq\x01."),
                 "pickle names a class: collections.OrderedDict");
  expectBadInput(bytesOf("\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x0b"
                         "collections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x94."),
                 "pickle names a class: collections.OrderedDict");
  expectBadInput(bytesOf("\x80\x02N)R."), "pickle calls code (REDUCE)");
  expectBadInput(bytesOf("\x80\x02}N"
                         "b."),
                 "pickle calls code (BUILD)");
  expectBadInput(bytesOf("\x80\x02N)\x81."), "pickle calls code (NEWOBJ)");
  expectBadInput(bytesOf("\x80\x02(ios\x0asystem\x0a."), "pickle names a class: os.system");
  expectBadInput(bytesOf("\x80\x02\x82\x01."), "extension registry");
  expectBadInput(bytesOf("\x80\x02N"
                         "Q."),
                 "persistent");
  expectBadInput(bytesOf("\x80\x05\x97."), "out-of-band");
  expectBadInput(bytesOf("I42\x0a."), "protocol 0 text opcode");
}

TEST(Pickle, MalformedInputIsBadInput) {
  expectBadInput("", "before the STOP");
  expectBadInput(bytesOf("\x80\x02N"), "before the STOP");
  expectBadInput(bytesOf("\x80\x06N."), "unsupported protocol 6");
  expectBadInput(bytesOf("\x80\x02"
                         "a."),
                 "stack underflow");
  expectBadInput(bytesOf("\x80\x02]("
                         "a."),
                 "stack underflow");  // APPEND cannot reach below a MARK
  expectBadInput(bytesOf("\x80\x02}(K\x01u."), "odd number");
  expectBadInput(bytesOf("\x80\x02K\x01(K\x02"
                         "e."),
                 "APPENDS applied to a int");
  expectBadInput(bytesOf("\x80\x02h\x05."), "memo entry 5 was never stored");
  expectBadInput(bytesOf("\x80\x02\xff."), "unknown opcode 0xff");
  expectBadInput(bytesOf("\x80\x02"
                         "e."),
                 "no MARK");
}

TEST(Pickle, EveryTruncationIsRefused) {
  for (size_t n = 0; n < kProtocol4.size(); ++n) {
    try {
      (void)unpickle(kProtocol4.substr(0, n));
      ADD_FAILURE() << "a prefix of " << n << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput);
    }
  }
}

TEST(Pickle, LyingLengthsAllocateNothing) {
  const long before = maxRssKb();
  // BINUNICODE claiming 4 GiB, BINUNICODE8 / BINBYTES8 / FRAME claiming exabytes, LONG4 claiming 2 GiB.
  expectBadInput(bytesOf("\x80\x02X\xff\xff\xff\xff"
                         "abc"),
                 "truncated");
  expectBadInput(bytesOf("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x0f"
                         "abc"),
                 "truncated");
  expectBadInput(bytesOf("\x80\x04\x8e\x00\x00\x00\x00\x01\x00\x00\x00"
                         "abc"),
                 "truncated");
  expectBadInput(bytesOf("\x80\x04\x95\x00\x00\x00\x00\x00\x01\x00\x00N."), "truncated");
  expectBadInput(bytesOf("\x80\x02\x8b\xff\xff\xff\x7f"), "larger than the limit");
  // A memo index of 2^32-1 is stored sparsely, not as a 16 GiB table.
  const PickleDocument doc =
      unpickle(bytesOf("\x80\x02Nr\xff\xff\xff\xff"
                       "0j\xff\xff\xff\xff."));
  EXPECT_TRUE(doc.root().is(PyKind::None));
  // Many sparse puts at growing indices keep the dense table proportional to the entries.
  std::string puts = bytesOf("\x80\x02N");
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t index = (uint32_t{1} << i) | 1u;
    puts += 'r';
    for (int k = 0; k < 4; ++k) puts += static_cast<char>((index >> (8 * k)) & 0xff);
  }
  puts += '.';
  EXPECT_TRUE(unpickle(puts).root().is(PyKind::None));
  EXPECT_LT(maxRssKb() - before, 64 * 1024) << "KiB of peak memory grew while decoding tiny inputs";
}

TEST(Pickle, SharedSubtreesStayLinear) {
  // x0 = []; x(k+1) = [xk, xk]: a tree of 2^60 lists in a few hundred bytes. The document shares
  // the nodes, and pyRepr stops at its limit.
  std::string data = bytesOf("\x80\x02]q\x00");
  for (int k = 0; k < 60; ++k) {
    data += bytesOf("](h");
    data += static_cast<char>(k);
    data += 'h';
    data += static_cast<char>(k);
    data += 'e';
    data += 'q';
    data += static_cast<char>(k + 1);
  }
  data += '.';
  const PickleDocument doc = unpickle(data);
  EXPECT_EQ(doc.nodeCount() - unpickle("N.").nodeCount(), 61u);  // the 61 lists, nothing copied
  const std::string repr = pyRepr(doc.root(), 1000);
  EXPECT_LE(repr.size(), 1003u);
  EXPECT_TRUE(repr.ends_with("..."));
}

TEST(Pickle, AMillionMemoReferencesAreOneObject) {
  // [d, d, d, ...] with d = {'action': 'alloc'} memoized once and fetched a million times with
  // BINGET: two bytes and one child slot a reference; every item is the same node, which is what
  // lets consumers (the snapshot decoder) see that an object is shared.
  std::string data = bytesOf(
      "\x80\x04]\x94(}\x94\x8c\x06"
      "action\x94\x8c\x05"
      "alloc\x94s");
  constexpr size_t kReferences = 1000000;
  for (size_t i = 1; i < kReferences; ++i) data += bytesOf("h\x01");
  data += "e.";
  const long before = maxRssKb();
  const PickleDocument doc = unpickle(data);
  EXPECT_LT(maxRssKb() - before, 64 * 1024) << "KiB of peak memory grew";
  EXPECT_EQ(doc.nodeCount() - unpickle("N.").nodeCount(), 4u);  // the list, the dict, two strings
  const PyRef list = doc.root();
  ASSERT_TRUE(list.is(PyKind::List));
  ASSERT_EQ(list.size(), kReferences);
  EXPECT_EQ(list.item(0).get("action").text(), "alloc");
  for (size_t i = 1; i < kReferences; ++i) ASSERT_EQ(list.item(i).id(), list.item(0).id()) << i;
}

TEST(Pickle, NestingAndCyclesAreBounded) {
  const auto nestedLists = [](size_t depth) {
    std::string data = bytesOf("\x80\x02");
    data.append(depth, ']');      // EMPTY_LIST x depth
    data.append(depth - 1, 'a');  // APPEND each into the one below it
    return data + ".";
  };
  UnpickleLimits limits;
  limits.maxDepth = 100;
  EXPECT_EQ(unpickle(nestedLists(100), {}, {}, limits).root().size(), 1u);
  expectBadInput(nestedLists(101), "nested deeper than 100", limits);
  expectBadInput(nestedLists(200000), "nested deeper than 1000");
  // l = []; l.append(l)
  expectBadInput(bytesOf("\x80\x02]q\x00h\x00"
                         "a."),
                 "contains itself");
  // a = []; b = [a]; a.append(b): the cycle closes through a container already placed in another.
  expectBadInput(bytesOf("\x80\x02]q\x00]q\x01h\x00"
                         "aa."),
                 "contains itself");
  // x = []; y = [x]; then a chain of `depth` lists is appended to x after x went into y, so y
  // ends up depth + 2 deep although it was 2 deep when built.
  const auto growsAfterPlacement = [](size_t depth) {
    std::string data = bytesOf(
        "\x80\x02]q\x00]h\x00"
        "ah\x00");
    data.append(depth, ']');
    data.append(depth - 1, 'a');
    return data + "a0.";
  };
  EXPECT_EQ(unpickle(growsAfterPlacement(98), {}, {}, limits).root().size(), 1u);
  expectBadInput(growsAfterPlacement(99), "nested deeper than 100", limits);
}

TEST(Pickle, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> byte(0, 255);
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    // Mutate a valid pickle so that many inputs get deep into decoding.
    std::string data = kProtocol4;
    const int edits = 1 + round % 8;
    for (int k = 0; k < edits; ++k) data[static_cast<size_t>(rng()) % data.size()] = static_cast<char>(byte(rng));
    try {
      const PickleDocument doc = unpickle(data);
      (void)pyRepr(doc.root(), 200);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    }
  }
  EXPECT_GT(accepted, 0u);  // some edits only change values
}

TEST(Pickle, CancellationStopsDecoding) {
  std::atomic<bool> cancel{true};
  Progress progress;
  progress.cancel = &cancel;
  try {
    (void)unpickle(kProtocol4, {}, progress);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Cancelled);
  }
}

TEST(Pickle, RealSnapshotDecodesLikePython) {
  // Expected values from python3: d = pickle.load(open(path, 'rb')).
  const PickleDocument doc = unpickle(readFile(samplePath("snapshots/llama3_8b_2l_train_snapshot.pickle")));
  const PyRef root = doc.root();
  ASSERT_TRUE(root.is(PyKind::Dict));
  EXPECT_EQ(root.get("segments").size(), 50u);
  ASSERT_EQ(root.get("device_traces").size(), 1u);
  const PyRef trace = root.get("device_traces").item(0);
  EXPECT_EQ(trace.size(), 1728u);
  // d['device_traces'][0][0]
  EXPECT_EQ(pyRepr(trace.item(0).get("addr")), "140135672882176");
  EXPECT_EQ(trace.item(0).get("time_us").asInt(), 1795968549962433);
  EXPECT_EQ(trace.item(0).get("frames").size(), 38u);
  // repr(d['allocator_settings'])[:120]
  EXPECT_EQ(pyRepr(root.get("allocator_settings")).substr(0, 120),
            "{'PYTORCH_CUDA_ALLOC_CONF': '', 'max_split_size': -1, 'garbage_collection_threshold': 0.0, "
            "'expandable_segments': False,");
}
