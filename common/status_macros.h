#pragma once
// Errors are values: fallible functions return absl::Status or
// absl::StatusOr<T>. Debian's abseil (20220623) predates abseil's own status
// macros, so we keep these two tiny ones.

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NEODB_STATUS_CONCAT_INNER_(a, b) a##b
#define NEODB_STATUS_CONCAT_(a, b) NEODB_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// when it is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status neodb_status_ = (expr);           \
    if (!neodb_status_.ok()) return neodb_status_;   \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` evaluates Foo() (an absl::StatusOr<T>);
// on error returns its status, else moves the value into `lhs`.
#define ASSIGN_OR_RETURN(lhs, expr)                                        \
  ASSIGN_OR_RETURN_IMPL_(NEODB_STATUS_CONCAT_(neodb_statusor_, __LINE__), \
                         lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                           \
  if (!statusor.ok()) return statusor.status();     \
  lhs = std::move(statusor).value()

// CHECK is for broken invariants (programmer errors), never for bad input:
// bad input is a Status.
#define NEODB_CHECK(cond)                                                  \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                 \
      std::abort();                                                        \
    }                                                                      \
  } while (0)
