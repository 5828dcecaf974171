// PyTorch checkpoints through LoadModel: real torch.save files written from stories260K
// by tools/testdata/make_pt_checkpoint.py with Debian's PyTorch, which must compute what
// the llama2.c file computes; and hand-built archives and pickles, good and bad, where every
// bad one must fail with an error naming the file, never crash.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/model_file.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

// ---------------------------------------------------------------------------------------
// Shared helpers.

// A short prompt, whose logits at every position are compared.
const std::vector<int> kTokens = testing::MixedTokens(13);

void ExpectSameShape(const ModelConfig& a, const ModelConfig& b) {
  testing::ExpectSameDimensions(a, b);
  EXPECT_FLOAT_EQ(a.norm_eps, b.norm_eps);
  EXPECT_FLOAT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.rope_layout, b.rope_layout);
}

// Loading `path` fails with the file's path and these substrings in its message.
void ExpectError(const std::string& path, const std::vector<std::string>& substrings) {
  SCOPED_TRACE(path);
  testing::ExpectError(LoadModel(path), path, substrings);
}

// ---------------------------------------------------------------------------------------
// Real checkpoints, written by PyTorch.

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-torch installs

// The checkpoints of one test process, removed when it exits.
struct Checkpoints {
  bool torch_missing = false;
  std::string dir;  // "" when they could not be made
  ~Checkpoints() { testing::RemoveTempDir(dir); }
};

const Checkpoints& MadeCheckpoints(const std::string& legacy) {
  static Checkpoints made = [&legacy] {
    Checkpoints c;
    if (std::system((std::string(kPython) + " -c 'import torch' 2>/dev/null").c_str()) != 0) {
      std::cerr << "\n*** " << kPython << " cannot import torch: install python3-torch "
                << "(scripts/install-deps.sh) to test PyTorch checkpoints ***\n\n";
      c.torch_missing = true;
      return c;
    }
    const std::string dir = testing::TempDir();
    const std::string command = std::string(kPython) + " '" + TOYLLM_SOURCE_DIR +
                                "/tools/testdata/make_pt_checkpoint.py' '" + legacy + "' '" + dir +
                                "'";
    if (std::system(command.c_str()) == 0) {
      c.dir = dir;
    } else {
      ADD_FAILURE() << "failed: " << command;
    }
    return c;
  }();
  return made;
}

// Named after the file so that `ctest -R pytorch` selects these tests.
class pytorch_checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string legacy_path = testing::Stories260K();
    TOYLLM_REQUIRE_FILE(legacy_path);
    const Checkpoints& made = MadeCheckpoints(legacy_path);
    if (made.torch_missing) {
      if (testing::ModelsRequired()) FAIL() << kPython << " cannot import torch";
      GTEST_SKIP() << "PYTORCH MISSING: " << kPython << " cannot import torch";
    }
    ASSERT_FALSE(made.dir.empty()) << "make_pt_checkpoint.py failed";
    dir_ = made.dir;
    absl::StatusOr<std::unique_ptr<ModelFile>> legacy = LoadModel(legacy_path);
    ASSERT_TRUE(legacy.ok()) << legacy.status();
    legacy_ = *std::move(legacy);
    expected_ = testing::AllLogits(*legacy_, kTokens);
    ASSERT_FALSE(expected_.empty());
  }

  std::unique_ptr<ModelFile> Load(const std::string& relative) {
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(dir_ + "/" + relative);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }

  std::string dir_;
  std::unique_ptr<ModelFile> legacy_;
  std::vector<float> expected_;
};

TEST_F(pytorch_checkpoint, TrainPyFloat32GivesExactlyTheSameLogits) {
  std::unique_ptr<ModelFile> model = Load("train_f32.pt");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->format, "PyTorch checkpoint (float32)");
  ExpectSameShape(model->config, legacy_->config);
  EXPECT_EQ(model->config.context_length, 512);  // model_args' max_seq_len
  // The classifier shares the embedding's storage, and float32 is used in place.
  EXPECT_TRUE(model->config.tied_output);
  EXPECT_EQ(model->weights.output.data, model->weights.token_embedding.data);
  EXPECT_TRUE(model->converted.empty());
  EXPECT_EQ(testing::AllLogits(*model, kTokens), expected_);
}

TEST_F(pytorch_checkpoint, TrainPyBfloat16IsClose) {
  std::unique_ptr<ModelFile> model = Load("train_bf16.pt");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->format, "PyTorch checkpoint (bfloat16)");
  ExpectSameShape(model->config, legacy_->config);
  EXPECT_TRUE(model->config.tied_output);
  // bfloat16 keeps 8 significant bits (relative error up to 2^-9 per weight); over these
  // 13 positions the logits measured 0.087 off at most, so 0.25 leaves room.
  const float diff = testing::MaxAbsDiff(testing::AllLogits(*model, kTokens), expected_);
  std::cout << "bfloat16: max |logit difference| = " << diff << "\n";
  EXPECT_GT(diff, 0.0f);
  EXPECT_LT(diff, 0.25f);
}

TEST_F(pytorch_checkpoint, BareStateDictTakesNHeadsFromParamsJson) {
  const std::string tokenizer = testing::Tok512();
  TOYLLM_REQUIRE_FILE(tokenizer);
  std::filesystem::copy_file(tokenizer, dir_ + "/bare/tokenizer.model",
                             std::filesystem::copy_options::overwrite_existing);
  std::unique_ptr<ModelFile> model = Load("bare/consolidated.00.pth");
  ASSERT_NE(model, nullptr);
  // params.json has no max_seq_len.
  EXPECT_EQ(model->format, "PyTorch checkpoint (float32; context length unknown, assumed 2048)");
  EXPECT_EQ(model->config.context_length, 2048);
  ExpectSameShape(model->config, legacy_->config);
  EXPECT_FALSE(model->config.tied_output);
  EXPECT_NE(model->weights.output.data, model->weights.token_embedding.data);
  EXPECT_EQ(model->vocabulary.sentencepiece_model, testing::ReadFile(tokenizer));
  EXPECT_EQ(testing::AllLogits(*model, kTokens), expected_);

  std::unique_ptr<ModelFile> half = Load("bare/consolidated.f16.pth");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->format, "PyTorch checkpoint (float16; context length unknown, assumed 2048)");
  // float16 keeps 11 significant bits: measured 0.017 off at most.
  const float diff = testing::MaxAbsDiff(testing::AllLogits(*half, kTokens), expected_);
  std::cout << "float16: max |logit difference| = " << diff << "\n";
  EXPECT_LT(diff, 0.05f);
}

TEST_F(pytorch_checkpoint, BareStateDictWithoutParamsJsonHasNoHeadCount) {
  const std::string lonely = testing::TempDir();
  const std::string path = lonely + "/consolidated.00.pth";
  std::filesystem::copy_file(dir_ + "/bare/consolidated.00.pth", path);
  ExpectError(path, {"n_heads is unknown"});
  testing::RemoveTempDir(lonely);
}

TEST_F(pytorch_checkpoint, TruncatedCheckpoint) {
  const std::string bytes = testing::ReadFile(dir_ + "/train_f32.pt");
  ASSERT_FALSE(bytes.empty());
  for (size_t size : {bytes.size() - 1, bytes.size() / 2, size_t{100}}) {
    ExpectError(testing::WriteFile(dir_, "truncated.pt", bytes.substr(0, size)), {"truncated"});
  }
}

// ---------------------------------------------------------------------------------------
// Hand-built checkpoints: a tiny model (dim 4, two heads of 2, one key/value head, one
// layer, hidden 6, vocabulary 8) in the layout torch.save writes.

void AppendU16(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8 & 0xff));
}
void AppendU32(std::string& out, uint32_t v) {
  AppendU16(out, v & 0xffff);
  AppendU16(out, v >> 16);
}

// The opcodes of a protocol-2 pickle, as Python's pickle module writes them.
struct PickleWriter {
  std::string bytes = "\x80\x02";  // PROTO 2

  PickleWriter& Op(char op) {
    bytes.push_back(op);
    return *this;
  }
  PickleWriter& Str(const std::string& s) {  // BINUNICODE
    bytes.push_back('X');
    AppendU32(bytes, static_cast<uint32_t>(s.size()));
    bytes += s;
    return *this;
  }
  PickleWriter& Int(int32_t v) {  // BININT
    bytes.push_back('J');
    AppendU32(bytes, static_cast<uint32_t>(v));
    return *this;
  }
  PickleWriter& Global(const std::string& module, const std::string& name) {
    bytes += "c" + module + "\n" + name + "\n";
    return *this;
  }
  PickleWriter& IntTuple(const std::vector<int64_t>& values) {
    Op('(');
    for (int64_t v : values) Int(static_cast<int32_t>(v));
    return Op('t');
  }
};

struct TinyTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;  // row-major unless a test changes it
  int64_t numel = 0;            // as the persistent id says
  std::string storage;          // the bytes of data/<key>
};

TinyTensor MakeTensor(const std::string& name, std::vector<int64_t> shape, float first) {
  TinyTensor t{name, shape, std::vector<int64_t>(shape.size(), 1), 1, ""};
  for (size_t i = shape.size(); i-- > 1;) t.stride[i - 1] = t.stride[i] * shape[i];
  for (int64_t d : shape) t.numel *= d;
  for (int64_t i = 0; i < t.numel; ++i) {
    const float v = first + 0.01f * static_cast<float>(i);
    t.storage.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  return t;
}

std::vector<TinyTensor> TinyTensors() {
  std::vector<TinyTensor> t;
  t.push_back(MakeTensor("_orig_mod.tok_embeddings.weight", {8, 4}, 0.5f));
  t.push_back(MakeTensor("_orig_mod.layers.0.attention_norm.weight", {4}, 1.0f));
  t.push_back(MakeTensor("_orig_mod.layers.0.attention.wq.weight", {4, 4}, -0.1f));
  t.push_back(MakeTensor("_orig_mod.layers.0.attention.wk.weight", {2, 4}, -0.2f));
  t.push_back(MakeTensor("_orig_mod.layers.0.attention.wv.weight", {2, 4}, -0.3f));
  t.push_back(MakeTensor("_orig_mod.layers.0.attention.wo.weight", {4, 4}, -0.4f));
  t.push_back(MakeTensor("_orig_mod.layers.0.ffn_norm.weight", {4}, 1.0f));
  t.push_back(MakeTensor("_orig_mod.layers.0.feed_forward.w1.weight", {6, 4}, 0.1f));
  t.push_back(MakeTensor("_orig_mod.layers.0.feed_forward.w2.weight", {4, 6}, 0.2f));
  t.push_back(MakeTensor("_orig_mod.layers.0.feed_forward.w3.weight", {6, 4}, 0.3f));
  t.push_back(MakeTensor("_orig_mod.norm.weight", {4}, 1.0f));
  return t;
}

// {"model": {name: tensor, ...}, "model_args": {"n_heads": n_heads}}; no model_args when
// n_heads is 0. Tensor i views storage "i".
std::string StateDictPickle(const std::vector<TinyTensor>& tensors, int n_heads) {
  PickleWriter p;
  p.Op('}').Op('(').Str("model").Op('}').Op('(');
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TinyTensor& t = tensors[i];
    p.Str(t.name).Global("torch._utils", "_rebuild_tensor_v2").Op('(');
    p.Op('(').Str("storage").Global("torch", "FloatStorage").Str(std::to_string(i)).Str("cpu");
    p.Int(static_cast<int32_t>(t.numel)).Op('t').Op('Q');
    p.Int(0).IntTuple(t.shape).IntTuple(t.stride).Op('\x89');
    p.Global("collections", "OrderedDict").Op(')').Op('R').Op('t').Op('R');
  }
  p.Op('u');
  if (n_heads > 0) p.Str("model_args").Op('}').Str("n_heads").Int(n_heads).Op('s');
  return p.Op('u').Op('.').bytes;
}

// A ZIP archive of stored entries, as torch.save lays it out (minus the alignment padding).
// `method` marks every entry as compressed with that method when non-zero.
std::string Zip(const std::vector<std::pair<std::string, std::string>>& entries,
                uint16_t method = 0) {
  std::string out, directory;
  for (const auto& [name, data] : entries) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    for (std::string* header : {&out, &directory}) {
      const bool central = header == &directory;
      AppendU32(*header, central ? 0x02014b50 : 0x04034b50);
      if (central) AppendU16(*header, 20);  // version made by
      for (uint32_t v : {20u, 0u, uint32_t{method}, 0u, 0u})
        AppendU16(*header, v);  // version, flags, method, time, date
      AppendU32(*header, 0);    // CRC-32, which the reader does not check
      AppendU32(*header, static_cast<uint32_t>(data.size()));
      AppendU32(*header, static_cast<uint32_t>(data.size()));
      AppendU16(*header, static_cast<uint32_t>(name.size()));
      AppendU16(*header, 0);  // extra field
      if (central) {
        for (int i = 0; i < 3; ++i) AppendU16(*header, 0);  // comment, disk, internal attributes
        AppendU32(*header, 0);                              // external attributes
        AppendU32(*header, offset);
      }
      *header += name;
    }
    out += data;
  }
  const uint32_t directory_start = static_cast<uint32_t>(out.size());
  out += directory;
  AppendU32(out, 0x06054b50);
  for (uint32_t v :
       {0u, 0u, static_cast<uint32_t>(entries.size()), static_cast<uint32_t>(entries.size())}) {
    AppendU16(out, v);
  }
  AppendU32(out, static_cast<uint32_t>(directory.size()));
  AppendU32(out, directory_start);
  AppendU16(out, 0);  // comment
  return out;
}

std::string TinyCheckpoint(const std::vector<TinyTensor>& tensors, int n_heads = 2) {
  std::vector<std::pair<std::string, std::string>> entries = {
      {"tiny/data.pkl", StateDictPickle(tensors, n_heads)}};
  for (size_t i = 0; i < tensors.size(); ++i)
    entries.push_back({"tiny/data/" + std::to_string(i), tensors[i].storage});
  entries.push_back({"tiny/version", "3\n"});
  return Zip(entries);
}

// An archive whose data.pkl is `pickle` and holds no storages.
std::string PickleOnly(const std::string& pickle) {
  return Zip({{"x/data.pkl", pickle}, {"x/version", "3\n"}});
}

class pytorch_reader : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDir(); }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    return testing::WriteFile(dir_, name, bytes);
  }

  std::string dir_;
};

TEST_F(pytorch_reader, HandBuiltCheckpointLoads) {
  absl::StatusOr<std::unique_ptr<ModelFile>> model =
      LoadModel(Write("tiny.pt", TinyCheckpoint(TinyTensors())));
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ((*model)->format, "PyTorch checkpoint (float32; context length unknown, assumed 2048)");
  EXPECT_EQ(c.dim, 4);
  EXPECT_EQ(c.hidden_dim, 6);
  EXPECT_EQ(c.n_layers, 1);
  EXPECT_EQ(c.n_heads, 2);
  EXPECT_EQ(c.n_kv_heads, 1);
  EXPECT_EQ(c.head_dim, 2);
  EXPECT_EQ(c.vocab_size, 8);
  EXPECT_TRUE(c.tied_output);  // no output.weight
  EXPECT_FLOAT_EQ((*model)->weights.token_embedding.floats()[1 * c.dim + 2], 0.5f + 0.01f * 6);
  EXPECT_FLOAT_EQ((*model)->weights.layers[0].w2.floats()[3 * c.hidden_dim + 5], 0.2f + 0.01f * 23);
}

TEST_F(pytorch_reader, TruncatedZip) {
  const std::string good = TinyCheckpoint(TinyTensors());
  for (size_t size : {good.size() - 1, good.size() / 2, size_t{30}, size_t{4}}) {
    ExpectError(Write("truncated.pt", good.substr(0, size)), {"truncated"});
  }
}

TEST_F(pytorch_reader, ZipStructureErrors) {
  std::vector<std::pair<std::string, std::string>> entries = {
      {"x/data.pkl", PickleWriter().Op('}').Op('.').bytes}};
  ExpectError(Write("deflated.pt", Zip(entries, /*method=*/8)),
              {"'x/data.pkl' is compressed (method 8)"});
  // A ZIP64 archive saturates the end record's directory offset.
  std::string zip64 = Zip(entries);
  zip64.replace(zip64.size() - 6, 4, "\xff\xff\xff\xff");
  ExpectError(Write("zip64.pt", zip64), {"ZIP64"});
  std::string many = Zip(entries);
  many.replace(many.size() - 14, 4, "\xff\x0f\xff\x0f");  // 4095 entries in a 56-byte directory
  ExpectError(Write("many.pt", many), {"cannot hold 4095 entries"});
  ExpectError(Write("no_pickle.pt", Zip({{"x/version", "3\n"}})), {"0 data.pkl entries"});
}

TEST_F(pytorch_reader, ForbiddenGlobal) {
  // os.system("ls"): what a malicious pickle does; it must never run.
  PickleWriter p;
  p.Global("os", "system").Str("ls").Op('\x85').Op('R').Op('.');
  ExpectError(Write("os_system.pt", PickleOnly(p.bytes)), {"data.pkl", "'os.system' is forbidden"});
  PickleWriter builtin;
  builtin.Global("builtins", "eval").Op('.');
  ExpectError(Write("eval.pt", PickleOnly(builtin.bytes)), {"'builtins.eval' is forbidden"});
  // An allowed name that is no callable.
  PickleWriter storage;
  storage.Global("torch", "FloatStorage").Op(')').Op('R').Op('.');
  ExpectError(Write("call_storage.pt", PickleOnly(storage.bytes)),
              {"'torch.FloatStorage' cannot be called"});
}

TEST_F(pytorch_reader, MemoIndexOutOfRange) {
  PickleWriter p;
  p.Op('}').Op('q').Op('\0').Op('h').Op('\x05').Op('.');  // BINPUT 0, then BINGET 5
  ExpectError(Write("memo.pt", PickleOnly(p.bytes)), {"memo index 5 was never stored"});
  PickleWriter long_get;
  long_get.Op('}').Op('j').Op('\xff').Op('\xff').Op('\xff').Op('\xff').Op('.');
  ExpectError(Write("long_memo.pt", PickleOnly(long_get.bytes)), {"memo index 4294967295"});
}

TEST_F(pytorch_reader, MalformedPickles) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {PickleWriter().Op('s').Op('.').bytes, "stack underflow"},
      {PickleWriter().Op('}').Op('(').Op('s').Op('.').bytes,
       "stack underflow"},  // not below a MARK
      {PickleWriter().Op('t').Op('.').bytes, "no MARK"},
      {PickleWriter().Op('}').Op('i').Op('.').bytes, "opcode 0x69"},  // INST
      {PickleWriter().Op('\x95').bytes, "opcode 0x95"},               // FRAME (protocol 4)
      {PickleWriter().Op('}').bytes, "without STOP"},
      {PickleWriter().Op('}').Op('}').Op('.').bytes, "STOP with 2 values"},
      {PickleWriter().Op('X').Op('\xff').Op('\xff').Op('\xff').Op('\x7f').bytes,
       "runs past the end"},
      {PickleWriter().Op('J').Op('\x01').bytes, "operand past the end"},
      {PickleWriter().Op(']').Op(']').Op('s').Op('.').bytes, "SETITEM without a dict"},
      {PickleWriter().Str("not a tuple").Op('Q').Op('.').bytes, "persistent id"},
      {PickleWriter().Global("torch._utils", "_rebuild_tensor_v2").Op(')').Op('R').Op('.').bytes,
       "_rebuild_tensor_v2 with 0 arguments"},
      {PickleWriter().Op(']').Op('.').bytes, "not a dict"},
      {PickleWriter().Op('\x8a').Op('\x09').bytes, "9-byte integer"},
      {PickleWriter().Op('c').Op('o').Op('s').bytes, "newline"},
      {PickleWriter().Op('}').bytes + std::string(1000, '(') + ".", "nested deeper than 64"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    ExpectError(Write("bad_pickle_" + std::to_string(i) + ".pt", PickleOnly(cases[i].first)),
                {cases[i].second});
  }
}

TEST_F(pytorch_reader, StorageShorterThanTheTensor) {
  // The archive entry holds fewer bytes than the persistent id's element count.
  std::vector<TinyTensor> short_entry = TinyTensors();
  short_entry[3].storage.resize(12);
  ExpectError(Write("short_entry.pt", TinyCheckpoint(short_entry)),
              {"'tiny/data/3' has 12 bytes, not the 8 float32 elements"});
  // The storage has fewer elements than the view's shape needs.
  std::vector<TinyTensor> short_storage = TinyTensors();
  short_storage[0].numel = 31;
  short_storage[0].storage.resize(31 * sizeof(float));
  ExpectError(
      Write("short_storage.pt", TinyCheckpoint(short_storage)),
      {"'tok_embeddings.weight' of shape [8, 4] at offset 0 needs more than the 31 elements"});
  // A stride that reaches past the end.
  std::vector<TinyTensor> far_stride = TinyTensors();
  far_stride[2].stride = {1 << 30, 1};
  ExpectError(Write("far_stride.pt", TinyCheckpoint(far_stride)),
              {"'layers.0.attention.wq.weight'", "needs more"});
}

TEST_F(pytorch_reader, TensorsThatDoNotFitTheModel) {
  std::vector<TinyTensor> transposed = TinyTensors();
  transposed[2].stride = {1, 4};  // wq.T: the same elements, column-major
  ExpectError(Write("transposed.pt", TinyCheckpoint(transposed)),
              {"'layers.0.attention.wq.weight' is not contiguous (strides [1, 4])"});
  std::vector<TinyTensor> wrong_shape = TinyTensors();
  wrong_shape[5] = MakeTensor("layers.0.attention.wo.weight", {4, 2}, 0.0f);
  ExpectError(Write("wrong_shape.pt", TinyCheckpoint(wrong_shape)),
              {"'layers.0.attention.wo.weight' has shape [4, 2], not the [4, 4]"});
  std::vector<TinyTensor> missing = TinyTensors();
  missing.erase(missing.begin() + 9);
  ExpectError(Write("missing.pt", TinyCheckpoint(missing)),
              {"'layers.0.feed_forward.w3.weight' is missing"});
  ExpectError(Write("no_args.pt", TinyCheckpoint(TinyTensors(), /*n_heads=*/0)),
              {"n_heads is unknown"});
  ExpectError(Write("heads_3.pt", TinyCheckpoint(TinyTensors(), /*n_heads=*/3)),
              {"n_heads = 3 does not divide dim = 4"});
}

}  // namespace
}  // namespace toyllm
