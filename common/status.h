// Errors as values.
//
//   Status s = Status::Invalid("system.yaml", "key 'endpoint-delay'", "-3", "a number >= 0");
//   if (!s.ok()) std::cerr << s.message() << "\n";
//
//   StatusOr<Config> c = LoadConfig(path);
//   if (!c.ok()) return c.status();
//   Use(*c);
//
// Library code returns these instead of exiting or throwing; the command line turns them into
// one clear message and a non-zero exit. Several problems can be carried in one Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // A free-form error message ("<where>: <what>").
  static Status Error(std::string message) {
    Status s;
    s.problems_.push_back(std::move(message));
    return s;
  }
  // "<where>: <what> is <bad>; expected <valid>".
  static Status Invalid(const std::string& where, const std::string& what, const std::string& bad,
                        const std::string& valid);

  bool ok() const { return problems_.empty(); }
  // All problems, one per line.
  std::string message() const;
  const std::vector<std::string>& problems() const { return problems_; }

  // Collects another status's problems into this one (to report all problems, not the first).
  void Merge(const Status& other) {
    problems_.insert(problems_.end(), other.problems_.begin(), other.problems_.end());
  }
  void Add(std::string problem) { problems_.push_back(std::move(problem)); }
  // Prefixes every problem with context, e.g. the file name.
  Status WithContext(const std::string& context) const;
  // The first `limit` problems, then "... and N more problems in <file>" (a file with thousands
  // of bad keys gives a readable message, not thousands of lines).
  Status Capped(size_t limit, const std::string& file) const {
    if (problems_.size() <= limit) return *this;
    const size_t more = problems_.size() - limit;
    Status s;
    s.problems_.assign(problems_.begin(), problems_.begin() + static_cast<std::ptrdiff_t>(limit));
    s.problems_.push_back("... and " + std::to_string(more) +
                          (more == 1 ? " more problem in " : " more problems in ") + file);
    return s;
  }

 private:
  std::vector<std::string> problems_;
};

// How many problems of one input file are listed before the rest are counted (Status::Capped).
inline constexpr size_t kMaxProblemsPerFile = 20;

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  bool ok() const { return status_.ok() && value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

// Always-on invariant check: prints the message and aborts. For programming errors only,
// never for bad input (which gets a Status).
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);

#define ORRERY_CHECK(cond, msg)                                                                \
  do {                                                                                         \
    if (__builtin_expect(!(cond), 0)) ::orrery::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

// `s` without the spaces, tabs, carriage returns and newlines around it.
std::string Trim(const std::string& s);

// `s` in ASCII lower case ("NVLS" -> "nvls").
std::string Lower(std::string s);

// Why `path` is not a file an input can be read from, "" when it is or when it does not exist
// (opening it then says so): a directory, or a device (/dev/zero, which a reader would never
// finish) or a socket. A pipe is fine (a shell's <(...) is read to its end). Symbolic links are
// followed.
std::string NotARegularFile(const std::string& path);

// `s` as a whole number from 0 to `most` (digits only: no sign, space, point or exponent), or
// nullopt. For counts and sizes read as text (boost would take "-1" for 2^64 - 1).
std::optional<uint64_t> ParseWholeNumber(const std::string& s, uint64_t most);

// What a run says when an allocation fails (std::bad_alloc): by main(), and for a sweep's point
// or a trace file whose loading failed inside a parallel loop, which no exception may leave.
inline constexpr const char* kOutOfMemory =
    "out of memory: this run needs more memory than the process may use; give it more (ulimit "
    "-v, the container's or job's memory limit), or simulate fewer NPUs or a smaller trace";

// Returns the closest candidate to `word` by edit distance, or "" if none is close.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace orrery
