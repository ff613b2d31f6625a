#include "floe/catalog/sql_database.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <cstdlib>
#include <string>

namespace floe::catalog {

namespace {

// Replaces every occurrence of `secret` in `text` (drivers may echo connection parameters).
std::string Scrub(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "***");
  }
  return text;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

class SqliteDatabase final : public SqlDatabase {
 public:
  SqliteDatabase(sqlite3* db, std::string description)
      : db_(db), description_(std::move(description)) {}
  ~SqliteDatabase() override { sqlite3_close_v2(db_); }

  Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    FLOE_ASSIGN_OR_RAISE(sqlite3_stmt * stmt, Prepare(sql, params));
    int rc = sqlite3_step(stmt);
    while (rc == SQLITE_ROW) rc = sqlite3_step(stmt);
    Status st = rc == SQLITE_DONE ? Status::OK() : Error(rc, sql);
    sqlite3_finalize(stmt);
    FLOE_RETURN_NOT_OK(st);
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    FLOE_ASSIGN_OR_RAISE(sqlite3_stmt * stmt, Prepare(sql, params));
    std::vector<SqlRow> rows;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      SqlRow row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        if (text == nullptr) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(reinterpret_cast<const char*>(text),
                                       static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    Status st = rc == SQLITE_DONE ? Status::OK() : Error(rc, sql);
    sqlite3_finalize(stmt);
    FLOE_RETURN_NOT_OK(st);
    return rows;
  }

  const std::string& description() const override { return description_; }

 private:
  Result<sqlite3_stmt*> Prepare(std::string_view sql, const std::vector<SqlValue>& params) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return Error(rc, sql);
    for (size_t i = 0; i < params.size(); ++i) {
      int index = static_cast<int>(i) + 1;
      rc = params[i] ? sqlite3_bind_text(stmt, index, params[i]->data(),
                                         static_cast<int>(params[i]->size()), SQLITE_TRANSIENT)
                     : sqlite3_bind_null(stmt, index);
      if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return Error(rc, sql);
      }
    }
    return stmt;
  }

  Status Error(int rc, std::string_view sql) const {
    std::string msg = "SQLite " + description_ + ": " + sqlite3_errmsg(db_) +
                      " (in: " + std::string(sql.substr(0, 80)) + ")";
    if ((rc & 0xff) == SQLITE_CONSTRAINT) return Status::AlreadyExists(msg);
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
      return Status::Unavailable(msg);
    }
    return Status::IOError(msg);
  }

  sqlite3* db_;
  std::string description_;
};

class PostgresDatabase final : public SqlDatabase {
 public:
  PostgresDatabase(PGconn* conn, std::string description, std::string password)
      : conn_(conn), description_(std::move(description)), password_(std::move(password)) {}
  ~PostgresDatabase() override { PQfinish(conn_); }

  Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    FLOE_ASSIGN_OR_RAISE(PGresult * res, Run(sql, params, /*may_retry=*/false));
    const char* changed = PQcmdTuples(res);
    int64_t n = changed ? std::strtoll(changed, nullptr, 10) : 0;
    PQclear(res);
    return n;
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    FLOE_ASSIGN_OR_RAISE(PGresult * res, Run(sql, params, /*may_retry=*/true));
    std::vector<SqlRow> rows;
    for (int r = 0; r < PQntuples(res); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(res); ++c) {
        if (PQgetisnull(res, r, c)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(
              std::string(PQgetvalue(res, r, c), static_cast<size_t>(PQgetlength(res, r, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(res);
    return rows;
  }

  const std::string& description() const override { return description_; }

 private:
  // `?` placeholders become $1, $2, ... (the catalog's statements hold no `?` in literals).
  static std::string Numbered(std::string_view sql) {
    std::string out;
    int n = 0;
    for (char c : sql) {
      if (c == '?') {
        out += "$" + std::to_string(++n);
      } else {
        out += c;
      }
    }
    return out;
  }

  // A read may be retried once on a fresh connection; a write may not (it may have committed:
  // the caller then reports the outcome as unknown).
  Result<PGresult*> Run(std::string_view sql, const std::vector<SqlValue>& params, bool may_retry) {
    std::string text = Numbered(sql);
    std::vector<const char*> values;
    for (const SqlValue& p : params) values.push_back(p ? p->c_str() : nullptr);
    for (int attempt = 0;; ++attempt) {
      if (PQstatus(conn_) != CONNECTION_OK) PQreset(conn_);
      PGresult* res = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.data(), nullptr, nullptr, 0);
      ExecStatusType status = PQresultStatus(res);
      if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return res;
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      std::string code = state ? state : "";
      std::string msg = Scrub("PostgreSQL " + description_ + ": " +
                                  Trimmed(res ? PQresultErrorMessage(res) : PQerrorMessage(conn_)) +
                                  (code.empty() ? "" : " (SQLSTATE " + code + ")") +
                                  " (in: " + std::string(sql.substr(0, 80)) + ")",
                              password_);
      PQclear(res);
      bool connection_lost = PQstatus(conn_) != CONNECTION_OK;
      if (connection_lost && may_retry && attempt == 0) continue;
      // Unique violation, and a table or type (a table's row type) that already exists: what
      // two sessions running the same CREATE TABLE IF NOT EXISTS at once may get.
      if (code == "23505" || code == "42P07" || code == "42710") return Status::AlreadyExists(msg);
      if (connection_lost) return Status::Unavailable(msg);
      return Status::IOError(msg);
    }
  }

  PGconn* conn_;
  std::string description_;
  std::string password_;
};

}  // namespace

std::string RedactPassword(const std::string& uri) {
  std::string out = uri;
  size_t scheme = out.find("://");
  size_t at = out.find('@');
  if (scheme != std::string::npos && at != std::string::npos) {
    size_t colon = out.find(':', scheme + 3);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  size_t p = out.find("password=");
  while (p != std::string::npos) {
    size_t end = out.find('&', p);
    out.replace(p + 9, (end == std::string::npos ? out.size() : end) - p - 9, "***");
    p = out.find("password=", p + 12);
  }
  return out;
}

Result<std::unique_ptr<SqlDatabase>> OpenSqlite(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::IOError("cannot open SQLite database " + path + ": " + msg);
  }
  // Several processes (a job's committer, `floe table` commands) share the file: wait for the
  // lock instead of failing at once.
  sqlite3_busy_timeout(db, 30000);
  return std::unique_ptr<SqlDatabase>(std::make_unique<SqliteDatabase>(db, path));
}

Result<std::unique_ptr<SqlDatabase>> OpenPostgres(const std::string& uri, const std::string& user,
                                                  const std::string& password) {
  std::vector<const char*> keys = {"dbname"};
  std::vector<const char*> values = {uri.c_str()};
  if (!user.empty()) {
    keys.push_back("user");
    values.push_back(user.c_str());
  }
  if (!password.empty()) {
    keys.push_back("password");
    values.push_back(password.c_str());
  }
  keys.push_back("connect_timeout");
  values.push_back("10");
  keys.push_back(nullptr);
  values.push_back(nullptr);
  std::string description = RedactPassword(uri);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return Status::IOError("PostgreSQL " + description + ": out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = Scrub(Trimmed(PQerrorMessage(conn)), password);
    PQfinish(conn);
    return Status::Unavailable("cannot connect to PostgreSQL " + description + ": " + msg);
  }
  // Keep the server's notices (CREATE TABLE IF NOT EXISTS ... skipping) off stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<SqlDatabase>(
      std::make_unique<PostgresDatabase>(conn, std::move(description), password));
}

}  // namespace floe::catalog
