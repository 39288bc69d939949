#include "util/progress.h"

#include "util/diagnostics.h"

namespace lathe {

void Progress::checkCancelled() const {
  if (cancelled()) throw Error(ErrorCode::Cancelled, "cancelled");
}

}  // namespace lathe
