// PyTorch checkpoints (.pt/.pth, torch.save's ZIP format) of Llama models with Meta's and
// llama2.c's tensor names: llama2.c train.py / nanoGPT-style {"model": state_dict,
// "model_args": {...}, ...} files, or a bare state dict such as Meta's consolidated.*.pth
// with a params.json beside it. Read without Python: a restricted unpickler rebuilds the
// state dict and the weights are viewed in, or converted from, the archive's storages.
#ifndef TOYLLM_MODELS_PYTORCH_READER_H_
#define TOYLLM_MODELS_PYTORCH_READER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"

namespace toyllm {

// Dimensions come from the tensors' shapes; n_heads (and the context length, norm epsilon
// and RoPE theta when given) from model_args, else from params.json beside the file.
// A tokenizer.model beside the file becomes ModelFile::vocabulary.
absl::StatusOr<std::unique_ptr<ModelFile>> ReadPytorchCheckpoint(const std::string& path);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_PYTORCH_READER_H_
