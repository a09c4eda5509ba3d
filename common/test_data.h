// Inputs of tests that live outside the tree, reached through Bazel's runfiles: the shared
// reference material ../shared beside the checkout, the external repository @orrery_shared
// (WORKSPACE). A test names what it reads in its `data` (`@orrery_shared//:compat`,
// `@orrery_shared//:validation`) and finds it here:
//
//   const std::string compat = SharedDir("compat");   // "" when it is not there
//   ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
//
// There is no environment variable to set and nothing is skipped: without ../shared the tests
// that need it do not build, and a test that forgot its `data` fails with the message above.
#pragma once

#include <string>

namespace orrery {

// The runfiles tree of this test or binary: $TEST_SRCDIR, $RUNFILES_DIR, or beside the binary.
std::string RunfilesDir();

// The absolute path of `sub` (e.g. "compat", "validation") of the shared reference material in
// the runfiles, or "" when it is not there.
std::string SharedDir(const std::string& sub);

// Why SharedDir(sub) is empty, and what to do about it.
std::string SharedDirMissing(const std::string& sub);

}  // namespace orrery
