// Interventions: the forward pass hands a few of its intermediates to an optional
// Intervention that may overwrite them before the rest of the pass uses them. Removing a
// head (ablation) or pasting in a value from another prompt (activation patching) tests
// what a component does, where a tap (taps.h) only shows what it computed.
#ifndef TOYLLM_RUNTIME_INTERVENTION_H_
#define TOYLLM_RUNTIME_INTERVENTION_H_

#include "runtime/taps.h"

namespace toyllm {

class Intervention {
 public:
  virtual ~Intervention() = default;
  // Called for kKqvOut (every head's weights·v, head h in columns h·head_dim..), kFfnOut
  // (the MLP's output) and kResidPost (the residual stream leaving the block), for `rows`
  // positions from `pos`, before the pass goes on; `data` holds rows × cols floats and
  // may be changed in place. Observers see the changed values.
  virtual void Edit(Tap tap, int layer, int pos, int rows, int cols, float* data) = 0;
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_INTERVENTION_H_
