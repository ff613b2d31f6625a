#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::catalog {

// One SQL value as text; nullopt is NULL.
using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

// A connection to the database behind a JDBC catalog (SQLite or PostgreSQL). Statements use `?`
// placeholders and run in autocommit mode. Errors never contain the password. Thread-compatible.
class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;
  // Rows changed. AlreadyExists on a unique-key violation.
  virtual Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) = 0;
  virtual Result<std::vector<SqlRow>> Query(std::string_view sql,
                                            const std::vector<SqlValue>& params) = 0;
  // Where the database is, for messages: the URI without password.
  virtual const std::string& description() const = 0;
};

// `uri` with the password of "user:password@" and of "password=" replaced by ***.
std::string RedactPassword(const std::string& uri);

// `path` is a file (created if missing) or ":memory:". Waits up to 30 s for a lock another
// process holds.
Result<std::unique_ptr<SqlDatabase>> OpenSqlite(const std::string& path);

// `uri` is libpq's "postgresql://host:port/db?params" (host=/dir in the query names a Unix
// socket directory). Empty user/password fall back to the URI, then to libpq's environment
// (PGUSER, PGPASSWORD, ~/.pgpass).
Result<std::unique_ptr<SqlDatabase>> OpenPostgres(const std::string& uri, const std::string& user,
                                                  const std::string& password);

}  // namespace floe::catalog
