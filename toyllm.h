// toyllm's public interface, the one the `toyllm` command line itself is written against.
//
//   auto model = toyllm::LoadModel("stories260K.bin");            // config + mapped weights
//   auto tokenizer = toyllm::LoadSentencePieceFile("tok512.model");
//   auto transformer = toyllm::Transformer::Create((*model)->config, (*model)->weights,
//                                                  (*model)->config.context_length);
//   toyllm::Sampler sampler({.temperature = 0.0f});
//   toyllm::Generate(**transformer, sampler, (*tokenizer)->Encode("Once", true), {}, on_token);
#ifndef TOYLLM_TOYLLM_H_
#define TOYLLM_TOYLLM_H_

#include "models/model_file.h"
#include "runtime/generate.h"
#include "runtime/model_config.h"
#include "runtime/ops.h"
#include "runtime/sampler.h"
#include "runtime/taps.h"
#include "runtime/transformer.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer.h"

#endif  // TOYLLM_TOYLLM_H_
