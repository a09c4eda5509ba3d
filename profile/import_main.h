// `orrery import --kineto TRACE [--kineto TRACE ...] [--et ET ...] --output PREFIX`; returns the
// process exit code.
#pragma once

namespace orrery {
namespace profile {

int ImportMain(int argc, char** argv);

}  // namespace profile
}  // namespace orrery
