// floe's REST catalog client against floe's REST catalog server (over a SQLite JDBC catalog),
// in one process, and the server under hostile requests. Other clients (iceberg-js) are
// checked in tests/integration/rest_catalog.test.mjs.
#include "floe/catalog/rest_catalog.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "floe/catalog/catalog_config.h"
#include "floe/catalog/rest_server.h"
#include "floe/common/json.h"
#include "floe/iceberg/commit_test_util.h"
#include "floe/io/file_io.h"

namespace floe::catalog {
namespace {

namespace fs = std::filesystem;
using iceberg::LoadedTable;
using iceberg::TableIdentifier;
using iceberg::TableMetadata;

class RestCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("floe_rest_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    server_.reset();
    backing_.reset();
    fs::remove_all(dir_);
  }

  void StartServer(const std::string& credential = "", int port = 0, size_t max_tokens = 10'000) {
    server_.reset();
    backing_.reset();
    CatalogConfig config;
    config.type = CatalogConfig::Type::kJdbc;
    config.uri = "jdbc:sqlite:" + (dir_ / "catalog.db").string();
    config.warehouse = (dir_ / "wh").string();
    backing_ = OpenCatalog(config).ValueOrDie();
    auto interposed = std::make_unique<iceberg::commit_testing::InterposedCatalog>(backing_.get());
    interposed_ = interposed.get();
    RestServerOptions options;
    options.port = port;
    options.credential = credential;
    options.max_tokens = max_tokens;
    server_ = RestCatalogServer::Start(std::move(interposed), options).ValueOrDie();
  }
  std::string Uri() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::unique_ptr<RestCatalog> Client(const std::string& credential = "") const {
    return RestCatalog::Make({Uri(), "", credential, "", {}}).ValueOrDie();
  }

  static iceberg::Schema TestSchema() {
    iceberg::Schema s;
    s.fields = {{"seq", DataType::Int64(), false, 1}, {"name", DataType::String(), true, 2}};
    s.identifier_field_ids = {1};
    return s;
  }
  static TableMetadata WithSnapshot(const TableMetadata& base, int64_t snapshot_id) {
    TableMetadata md = iceberg::commit_testing::WithSnapshot(
        base, snapshot_id, {{"floe.checkpoint-id", std::to_string(snapshot_id)}});
    md.properties["commit.count"] = std::to_string(snapshot_id);
    return md;
  }
  LoadedTable Create(iceberg::Catalog& c) {
    EXPECT_TRUE(iceberg::EnsureNamespace(c, "db").ok());
    iceberg::PartitionSpec spec;
    spec.fields = {{1, 0, "seq_bucket", {iceberg::TransformKind::kBucket, 4}}};
    return c.CreateTable(id_, TestSchema(), spec, {{"write.upsert.enabled", "true"}}).ValueOrDie();
  }
  // A raw request, as a hostile or foreign client sends it.
  httplib::Result Raw(const std::string& method, const std::string& path,
                      const std::string& body = "") const {
    httplib::Client http("127.0.0.1", server_->port());
    if (method == "GET") return http.Get(path);
    return http.Post(path, body, "application/json");
  }

  fs::path dir_;
  std::unique_ptr<iceberg::Catalog> backing_;  // outlives the server, which uses it
  std::unique_ptr<RestCatalogServer> server_;
  iceberg::commit_testing::InterposedCatalog* interposed_ = nullptr;  // owned by the server
  TableIdentifier id_{"db", "t"};
};

TEST_F(RestCatalogTest, CreateLoadCommitListAndDropThroughTheServer) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  EXPECT_EQ(created.metadata.current_schema().fields, TestSchema().fields);
  EXPECT_EQ(created.metadata.current_schema().identifier_field_ids, std::vector<int32_t>{1});
  EXPECT_EQ(created.metadata.default_spec().fields.size(), 1u);
  EXPECT_EQ(created.metadata.Property("write.upsert.enabled", ""), "true");
  EXPECT_EQ(created.metadata.location, iceberg::PathToUri((dir_ / "wh" / "db" / "t").string()));

  LoadedTable next = client->CommitTable(created, WithSnapshot(created.metadata, 5)).ValueOrDie();
  EXPECT_EQ(next.metadata.current_snapshot_id, 5);
  EXPECT_EQ(next.metadata.Property("commit.count", ""), "5");
  EXPECT_EQ(next.metadata.metadata_log.size(), 1u);  // the server's catalog logged the base
  LoadedTable loaded = Client()->LoadTable(id_).ValueOrDie();
  EXPECT_EQ(loaded.metadata, next.metadata);
  EXPECT_EQ(loaded.metadata_location, next.metadata_location);
  EXPECT_EQ(loaded.metadata.snapshots[0].summary.at("floe.checkpoint-id"), "5");

  // A stale base is the spec's 409, a Conflict the committer retries.
  Result<LoadedTable> stale = client->CommitTable(created, WithSnapshot(created.metadata, 6));
  EXPECT_TRUE(stale.status().IsConflict()) << stale.status().ToString();

  // Expiry: the snapshot goes, the ref moves first.
  TableMetadata two = WithSnapshot(loaded.metadata, 7);
  LoadedTable with_two = client->CommitTable(loaded, two).ValueOrDie();
  TableMetadata expired = with_two.metadata;
  std::erase_if(expired.snapshots, [](const iceberg::Snapshot& s) { return s.snapshot_id == 5; });
  LoadedTable after = client->CommitTable(with_two, expired).ValueOrDie();
  ASSERT_EQ(after.metadata.snapshots.size(), 1u);
  EXPECT_EQ(after.metadata.snapshots[0].snapshot_id, 7);

  EXPECT_EQ(client->ListTables("db").ValueOrDie(), std::vector<TableIdentifier>{id_});
  EXPECT_EQ(client->ListNamespaces().ValueOrDie(), std::vector<std::string>{"db"});
  EXPECT_TRUE(client->CreateNamespace("db", {}).IsAlreadyExists());
  EXPECT_TRUE(client->LoadTable({"db", "nope"}).status().IsNotFound());
  ASSERT_TRUE(client->DropTable(id_, /*purge=*/true).ok());
  EXPECT_TRUE(client->LoadTable(id_).status().IsNotFound());
  EXPECT_FALSE(fs::exists(dir_ / "wh" / "db" / "t"));
}

// What another engine keeps in the table (main's retention, a statistics file) survives a
// commit through the server: set-snapshot-ref carries main's retention along, and
// remove-snapshots drops the removed snapshot's statistics with it.
TEST_F(RestCatalogTest, ARefsRetentionAndStatisticsSurviveCommitsThroughTheServer) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  LoadedTable first = client->CommitTable(created, WithSnapshot(created.metadata, 5)).ValueOrDie();
  TableMetadata theirs = first.metadata;  // as Spark would commit it, behind floe's back
  theirs.refs["main"].min_snapshots_to_keep = 4;
  theirs.refs["main"].max_snapshot_age_ms = 86400000;
  theirs.statistics.push_back({5, theirs.location + "/metadata/5.stats",
                               R"({"snapshot-id":5,"statistics-path":")" + theirs.location +
                                   R"(/metadata/5.stats","file-size-in-bytes":9,)"
                                   R"("file-footer-size-in-bytes":8,"blob-metadata":[]})"});
  ASSERT_TRUE(backing_->CommitTable(backing_->LoadTable(id_).ValueOrDie(), theirs).ok());

  LoadedTable base = client->LoadTable(id_).ValueOrDie();
  // The same entry (the server's JSON may order its keys otherwise).
  auto same_statistics = [&](const TableMetadata& m) {
    return m.statistics.size() == 1 && m.statistics[0].path == theirs.statistics[0].path &&
           nlohmann::json::parse(m.statistics[0].json) ==
               nlohmann::json::parse(theirs.statistics[0].json);
  };
  EXPECT_TRUE(same_statistics(base.metadata));
  LoadedTable next = client->CommitTable(base, WithSnapshot(base.metadata, 6)).ValueOrDie();
  EXPECT_EQ(next.metadata.refs.at("main").snapshot_id, 6);
  EXPECT_EQ(next.metadata.refs.at("main").min_snapshots_to_keep, 4);
  EXPECT_EQ(next.metadata.refs.at("main").max_snapshot_age_ms, 86400000);
  EXPECT_TRUE(same_statistics(next.metadata));

  TableMetadata expired = next.metadata;
  expired.RemoveSnapshots({5});
  LoadedTable after = client->CommitTable(next, expired).ValueOrDie();
  EXPECT_TRUE(after.metadata.statistics.empty());
  EXPECT_EQ(backing_->LoadTable(id_).ValueOrDie().metadata, after.metadata);
}

// What Spark and Trino send a REST catalog after they analyze or sort a table: statistics
// files, sort orders. The server keeps them (floe acts on neither), a floe commit carries them,
// and what is malformed is a 400 naming the field.
TEST_F(RestCatalogTest, AnotherEnginesStatisticsAndSortOrdersAreKeptByTheServer) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  LoadedTable first = client->CommitTable(created, WithSnapshot(created.metadata, 5)).ValueOrDie();
  const std::string table = "/v1/namespaces/db/tables/t";
  const std::string stats = R"({"snapshot-id":5,"statistics-path":")" + first.metadata.location +
                            R"(/metadata/5.stats","file-size-in-bytes":9,)"
                            R"("file-footer-size-in-bytes":8,"blob-metadata":[]})";
  const std::string order = R"({"order-id":-1,"fields":[{"transform":"identity","source-id":1,)"
                            R"("direction":"desc","null-order":"nulls-last"}]})";
  auto commit = [&](const std::string& updates) {
    return Raw("POST", table, R"({"requirements":[],"updates":[)" + updates + "]}");
  };
  auto r = commit(R"({"action":"set-statistics","snapshot-id":5,"statistics":)" + stats +
                  R"(},{"action":"set-partition-statistics","partition-statistics":)"
                  R"({"snapshot-id":5,"statistics-path":"p.parquet","file-size-in-bytes":3}},)"
                  R"({"action":"add-sort-order","sort-order":)" +
                  order + R"(},{"action":"set-default-sort-order","sort-order-id":-1})");
  ASSERT_TRUE(r) << "no answer";
  ASSERT_EQ(r->status, 200) << r->body;
  TableMetadata m = client->LoadTable(id_).ValueOrDie().metadata;
  ASSERT_EQ(m.statistics.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(m.statistics[0].json), nlohmann::json::parse(stats));
  EXPECT_EQ(m.partition_statistics.size(), 1u);
  EXPECT_EQ(m.default_sort_order_id, 1);
  EXPECT_EQ(m.WrittenSortOrderId(), std::nullopt);
  // The same order again keeps its id; the unsorted one is 0.
  r = commit(R"({"action":"add-sort-order","sort-order":)" + order +
             R"(},{"action":"add-sort-order","sort-order":{"order-id":7,"fields":[]}})");
  ASSERT_EQ(r->status, 200) << r->body;
  m = client->LoadTable(id_).ValueOrDie().metadata;
  std::vector<int32_t> ids;
  for (const iceberg::SortOrder& o : m.sort_orders) ids.push_back(o.order_id);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 0}));

  LoadedTable base = client->LoadTable(id_).ValueOrDie();
  LoadedTable next = client->CommitTable(base, WithSnapshot(base.metadata, 6)).ValueOrDie();
  EXPECT_EQ(next.metadata.statistics, m.statistics);
  EXPECT_EQ(next.metadata.sort_orders, m.sort_orders);
  EXPECT_EQ(next.metadata.default_sort_order_id, 1);

  r = commit(R"({"action":"remove-statistics","snapshot-id":5},)"
             R"({"action":"remove-partition-statistics","snapshot-id":5})");
  ASSERT_EQ(r->status, 200) << r->body;
  m = client->LoadTable(id_).ValueOrDie().metadata;
  EXPECT_TRUE(m.statistics.empty());
  EXPECT_TRUE(m.partition_statistics.empty());

  for (const auto& [bad, names] : std::vector<std::pair<std::string, std::string>>{
           {R"({"action":"set-statistics","statistics":{"snapshot-id":99,"statistics-path":"x"}})",
            "no snapshot 99"},
           {R"({"action":"add-sort-order","sort-order":{"fields":[{"transform":"identity",)"
            R"("source-id":42,"direction":"asc","null-order":"nulls-first"}]}})",
            "source-id': 42 is not a column"},
           {R"({"action":"add-sort-order","sort-order":{"fields":[{"transform":"identity",)"
            R"("source-id":1,"direction":"up","null-order":"nulls-first"}]}})",
            "expected asc|desc"},
           {R"({"action":"set-default-sort-order","sort-order-id":9})", "no sort order 9"}}) {
    r = commit(bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad;
    EXPECT_NE(r->body.find(names), std::string::npos) << r->body;
  }
}

// Schema evolution over REST: the client sends add-schema and set-current-schema with the
// current schema id and last column id asserted; a second client's stale base is a conflict.
TEST_F(RestCatalogTest, AnEvolvedSchemaIsAddedAndMadeCurrentThroughTheServer) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  std::vector<Field> declared = created.metadata.current_schema().fields;
  declared.push_back(Field{"email", DataType::String(), true, 0});
  std::vector<std::string> changes;
  TableMetadata evolved = iceberg::EvolveSchema(created.metadata, declared, &changes).ValueOrDie();
  ASSERT_EQ(changes.size(), 1u);
  LoadedTable next = client->CommitTable(created, evolved).ValueOrDie();
  EXPECT_EQ(next.metadata.current_schema_id, evolved.current_schema_id);
  EXPECT_EQ(next.metadata.schemas, evolved.schemas);
  EXPECT_EQ(next.metadata.last_column_id, evolved.last_column_id);
  EXPECT_EQ(
      Client()->LoadTable(id_).ValueOrDie().metadata.current_schema().FindByName("email")->field_id,
      evolved.last_column_id);
  // The same evolution from the old base again: the schema id asserted has moved.
  Result<LoadedTable> stale = client->CommitTable(created, evolved);
  EXPECT_TRUE(stale.status().IsConflict()) << stale.status().ToString();
}

TEST_F(RestCatalogTest, AFailedSwapBehindTheServerIsAnUnknownOutcomeNotAConflict) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  interposed_->commit_error = Status::Unavailable("database connection lost");
  Result<LoadedTable> r = client->CommitTable(created, WithSnapshot(created.metadata, 1));
  ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("unknown outcome"), std::string::npos);
  httplib::Result raw =
      Raw("POST", "/v1/namespaces/db/tables/t", R"({"requirements":[],"updates":[]})");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->status, 500);
  EXPECT_NE(raw->body.find("CommitStateUnknownException"), std::string::npos) << raw->body;
  // What failed behind the server is the server's log's business, not the client's.
  EXPECT_EQ(raw->body.find("database connection lost"), std::string::npos) << raw->body;
}

TEST_F(RestCatalogTest, CredentialsAreExchangedForATokenAndRenewedAfterAServerRestart) {
  StartServer("floe:s3cret");
  EXPECT_EQ(Raw("GET", "/v1/namespaces")->status, 401);
  Result<std::unique_ptr<RestCatalog>> wrong = RestCatalog::Make({Uri(), "", "floe:nope", "", {}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("refused the credential"), std::string::npos);
  EXPECT_EQ(wrong.status().message().find("nope"), std::string::npos);
  auto client = Client("floe:s3cret");
  Create(*client);
  // A restarted server has forgotten the token: the client fetches another once.
  int port = server_->port();
  StartServer("floe:s3cret", port);
  EXPECT_TRUE(client->LoadTable(id_).ok());
}

TEST_F(RestCatalogTest, TheServersS3ConfigIsMergedAroundEachClientsOwnPerKey) {
  server_.reset();
  backing_.reset();
  CatalogConfig backing;
  backing.type = CatalogConfig::Type::kJdbc;
  backing.uri = "jdbc:sqlite:" + (dir_ / "catalog.db").string();
  backing.warehouse = (dir_ / "wh").string();
  backing_ = OpenCatalog(backing).ValueOrDie();
  RestServerOptions options;
  options.config_defaults = {{"s3.endpoint", "http://127.0.0.1:9000"},
                             {"s3.access-key-id", "from-defaults"},
                             {"s3.secret-access-key", "x"},
                             {"client.region", "eu-west-1"},
                             {"prefix", "lake"}};
  options.config_overrides = {{"s3.access-key-id", "from-overrides"}};
  server_ =
      RestCatalogServer::Start(
          std::make_unique<iceberg::commit_testing::InterposedCatalog>(backing_.get()), options)
          .ValueOrDie();
  CatalogConfig client;
  client.type = CatalogConfig::Type::kRest;
  client.uri = Uri();
  auto served = OpenCatalog(client).ValueOrDie();
  // A second client with its own endpoint: its key beats the server's default, not the override.
  client.s3_options = {{"s3.endpoint", "http://127.0.0.1:9001"}, {"s3.secret-access-key", "y"}};
  auto own = OpenCatalog(client).ValueOrDie();
  io::S3Config s3 = served->file_io().s3_config().value();
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(s3.access_key_id, "from-overrides");
  EXPECT_EQ(s3.secret_access_key, "x");
  EXPECT_EQ(s3.region, "eu-west-1");
  s3 = own->file_io().s3_config().value();
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:9001");
  EXPECT_EQ(s3.access_key_id, "from-overrides");
  EXPECT_EQ(s3.secret_access_key, "y");
  EXPECT_EQ(s3.region, "eu-west-1");
  // The first catalog kept its own settings when the second was opened.
  EXPECT_EQ(served->file_io().s3_config()->endpoint, "http://127.0.0.1:9000");
  // The prefix from the defaults is used: the server answers under /v1/lake/ as under /v1/.
  EXPECT_TRUE(iceberg::EnsureNamespace(*served, "db").ok());
  EXPECT_EQ(served->ListNamespaces().ValueOrDie(), std::vector<std::string>{"db"});
}

// Property values are a user's bytes: not UTF-8 (a Latin-1 'é'), they cannot go into JSON as
// they are. They are sent with U+FFFD in their place (as Iceberg's metadata files hold them),
// by the client and by the server; neither process terminates.
TEST_F(RestCatalogTest, PropertiesThatAreNotUtf8AreSentWithReplacementCharacters) {
  StartServer();
  auto client = Client();
  ASSERT_TRUE(client->CreateNamespace("db", {{"owner", "caf\xe9"}}).ok());
  EXPECT_EQ(client->LoadNamespace("db").ValueOrDie().at("owner"), "caf\xef\xbf\xbd");
  Result<LoadedTable> created =
      client->CreateTable(id_, TestSchema(), {}, {{"comment", "caf\xe9"}, {"k\xff", "v"}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->metadata.Property("comment", ""), "caf\xef\xbf\xbd");
  EXPECT_EQ(created->metadata.Property("k\xef\xbf\xbd", ""), "v");
}

TEST_F(RestCatalogTest, TheServerAnswersForPropertiesThatAreNotUtf8) {
  StartServer();
  auto client = Client();
  // What the backing catalog holds, whatever the bytes, is answered (not a 500).
  ASSERT_TRUE(backing_->CreateNamespace("raw", {{"owner", "bad\xff"}}).ok());
  Result<std::map<std::string, std::string>> raw = client->LoadNamespace("raw");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->at("owner"), "bad\xef\xbf\xbd");
}

// A server whose answers are not JSON (here: invalid UTF-8 inside a string) gets an error
// naming the request, not an empty answer.
TEST_F(RestCatalogTest, AServerResponseThatIsNotValidJsonIsCorruptionNamingTheRequest) {
  httplib::Server fake;
  const std::string bad_json = "{\"namespace\":[\"db\"],\"properties\":{\"owner\":\"bad\xff\"}}";
  fake.Get("/v1/config", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  fake.Get("/v1/namespaces", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"namespaces\":[[\"db\xff\"]]}", "application/json");
  });
  fake.Get("/v1/namespaces/db", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(bad_json, "application/json");
  });
  fake.Get("/v1/namespaces/db/tables", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"identifiers\":[{\"namespace\":[\"db\"],\"name\":\"t\xff\"}]}",
                    "application/json");
  });
  fake.Get("/v1/namespaces/db/tables/t", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"metadata-location\":\"/x\xff\",\"metadata\":{}}", "application/json");
  });
  int port = fake.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { fake.listen_after_bind(); });
  while (!fake.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto client =
      RestCatalog::Make({"http://127.0.0.1:" + std::to_string(port), "", "", "", {}}).ValueOrDie();
  auto expect_corrupt = [](const Status& st, const std::string& request) {
    EXPECT_TRUE(st.IsCorruption()) << st.ToString();
    EXPECT_NE(st.message().find(request), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("not valid JSON"), std::string::npos) << st.ToString();
  };
  expect_corrupt(client->LoadNamespace("db").status(), "loading namespace db");
  expect_corrupt(client->ListNamespaces().status(), "listing namespaces");
  expect_corrupt(client->ListTables("db").status(), "listing tables of db");
  expect_corrupt(client->LoadTable(id_).status(), "loading table db.t");
  fake.stop();
  thread.join();
}

TEST_F(RestCatalogTest, HostileRequestsGetTheSpecsErrorsAndTheServerStaysUp) {
  StartServer();
  auto client = Client();
  LoadedTable created = Create(*client);
  struct Case {
    const char* path;
    std::string body;
    int status;
    const char* type;
  };
  const std::string table = "/v1/namespaces/db/tables/t";
  const std::string uuid = created.metadata.table_uuid;
  std::vector<Case> cases = {
      {"/v1/namespaces/db/tables/t", "not json", 400, "BadRequestException"},
      {"/v1/namespaces/db/tables/t", "[1,2]", 400, "BadRequestException"},
      {"/v1/namespaces/db/tables/t", R"({"requirements":{},"updates":[]})", 400,
       "BadRequestException"},
      {"/v1/namespaces/db/tables/t", R"({"requirements":[{"type":"assert-magic"}],"updates":[]})",
       400, "BadRequestException"},
      {"/v1/namespaces/db/tables/t", R"({"requirements":[],"updates":[{"action":"add-schema"}]})",
       400, "BadRequestException"},
      {"/v1/namespaces/db/tables/t", R"({"requirements":[],"updates":[{"action":42}]})", 400,
       "BadRequestException"},
      {"/v1/namespaces/db/tables/t",
       R"({"requirements":[],"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":"x"}}]})",
       400, "BadRequestException"},
      {"/v1/namespaces/db/tables/t",
       R"({"requirements":[{"type":"assert-table-uuid","uuid":"other"}],"updates":[]})", 409,
       "CommitFailedException"},
      {"/v1/namespaces/db/tables/t",
       R"({"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":12}],"updates":[]})",
       409, "CommitFailedException"},
      {"/v1/namespaces/db/tables/nope", R"({"requirements":[],"updates":[]})", 404,
       "NoSuchTableException"},
      // An encoded '/' stays inside its path segment: a bad namespace name.
      {"/v1/namespaces/db%2Fx/tables", R"({"name":"t2","schema":{}})", 400, "BadRequestException"},
      {"/v1/namespaces/db-x/tables", R"({"name":"t2","schema":{}})", 400, "BadRequestException"},
      {"/v1/namespaces/db/tables", R"({"name":"t2","schema":{}})", 400, "BadRequestException"},
      {"/v1/namespaces/db/tables",
       R"({"name":"t2","schema":{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":{"type":"list","element-id":2,"element":"int","element-required":true}}]}})",
       400, "BadRequestException"},
      {"/v1/namespaces/db/tables", R"({"name":"t","schema":{"type":"struct","fields":[]}})", 409,
       "AlreadyExistsException"},
      {"/v1/namespaces", R"({"namespace":["a","b"]})", 400, "BadRequestException"},
      {"/v1/namespaces", R"({"namespace":"a"})", 400, "BadRequestException"},
  };
  for (const Case& c : cases) {
    httplib::Result r = Raw("POST", c.path, c.body);
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, c.status) << c.path << " " << c.body << " -> " << r->body;
    EXPECT_NE(r->body.find(c.type), std::string::npos) << c.body << " -> " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  }
  httplib::Result big = Raw("POST", table, std::string(9 << 20, 'x'));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  // Nothing above changed the table, and the server still answers.
  EXPECT_EQ(client->LoadTable(id_).ValueOrDie().metadata, created.metadata);
  EXPECT_EQ(Raw("GET", "/v1/config")->status, 200);
}

// The answers the issue found wrong: a long name was a 500 with the database's error and the
// server's paths; 50,000 properties held the commit lock for seconds; a secret in the URL was
// taken.
TEST_F(RestCatalogTest, LongNamesHugeCommitsAndSecretsInTheUrlAre400sWithoutServerInternals) {
  StartServer("floe:s3cret");
  auto client = Client("floe:s3cret");
  LoadedTable created = Create(*client);
  httplib::Client http("127.0.0.1", server_->port());
  httplib::Params form = {
      {"grant_type", "client_credentials"}, {"client_id", "floe"}, {"client_secret", "s3cret"}};
  httplib::Result token = http.Post("/v1/oauth/tokens", form);
  ASSERT_TRUE(token && token->status == 200);
  const std::string bearer = Json::parse(token->body)["access_token"].get<std::string>();
  httplib::Headers auth = {{"Authorization", "Bearer " + bearer}};

  httplib::Result in_url = http.Post(
      "/v1/oauth/tokens?grant_type=client_credentials&client_id=floe&client_secret=s3cret", "",
      "application/x-www-form-urlencoded");
  ASSERT_TRUE(in_url);
  EXPECT_EQ(in_url->status, 400);
  EXPECT_NE(in_url->body.find(
                "credentials in the URL's query string are refused ('client_id', 'client_secret'"),
            std::string::npos)
      << in_url->body;
  EXPECT_EQ(http.Get("/v1/config?access_token=" + bearer)->status, 400);

  const std::string long_name(256, 'n');
  const std::string dir = dir_.string();
  for (const std::string& path :
       {"/v1/namespaces/" + long_name, "/v1/namespaces/db/tables/" + long_name}) {
    httplib::Result r = http.Get(path, auth);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find("of 256 bytes; names have 1 to 128 letters, digits and _"),
              std::string::npos)
        << r->body;
  }
  httplib::Result ns = http.Post("/v1/namespaces", auth,
                                 R"({"namespace":[")" + long_name + R"("]})", "application/json");
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->status, 400) << ns->body;

  Json many = Json::object();
  for (int i = 0; i < 50'000; ++i) many["k" + std::to_string(i)] = "v";
  Json commit = {{"requirements", Json::array()},
                 {"updates", {{{"action", "set-properties"}, {"updates", many}}}}};
  httplib::Result huge =
      http.Post("/v1/namespaces/db/tables/t", auth, commit.dump(), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 400);
  EXPECT_NE(huge->body.find("50000 properties; at most 1000 a request"), std::string::npos)
      << huge->body;
  // Nor in steps: a table keeps at most 1,000 properties.
  auto set_properties = [&](int from, int count) {
    Json props = Json::object();
    for (int i = from; i < from + count; ++i) props["p" + std::to_string(i)] = "v";
    Json step = {{"requirements", Json::array()},
                 {"updates", {{{"action", "set-properties"}, {"updates", props}}}}};
    return http.Post("/v1/namespaces/db/tables/t", auth, step.dump(), "application/json");
  };
  EXPECT_EQ(set_properties(0, 600)->status, 200);
  httplib::Result second = set_properties(600, 600);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 400);
  EXPECT_NE(second->body.find("the table would have 1201 properties; a table keeps at most 1000"),
            std::string::npos)
      << second->body;
  // Nothing says where the server keeps its files.
  for (const httplib::Result* r : {&in_url, &ns, &huge}) {
    EXPECT_EQ((*r)->body.find(dir), std::string::npos) << (*r)->body;
  }
  EXPECT_EQ(client->LoadTable(id_).ValueOrDie().metadata.properties.size(),
            created.metadata.properties.size() + 600);
}

// Tokens are kept up to a bound: asking for more forgets the oldest, not the server's memory.
TEST_F(RestCatalogTest, TheServerKeepsABoundedNumberOfTokensAndForgetsTheOldest) {
  StartServer("floe:s3cret", 0, /*max_tokens=*/2);
  httplib::Client http("127.0.0.1", server_->port());
  auto token = [&] {
    httplib::Result r =
        http.Post("/v1/oauth/tokens", httplib::Params{{"grant_type", "client_credentials"},
                                                      {"client_id", "floe"},
                                                      {"client_secret", "s3cret"}});
    EXPECT_TRUE(r && r->status == 200);
    return httplib::Headers{
        {"Authorization", "Bearer " + Json::parse(r->body)["access_token"].get<std::string>()}};
  };
  httplib::Headers first = token(), second = token(), third = token();
  EXPECT_EQ(http.Get("/v1/config", first)->status, 401);
  EXPECT_EQ(http.Get("/v1/config", second)->status, 200);
  EXPECT_EQ(http.Get("/v1/config", third)->status, 200);
  // floe's client asks again on a 401.
  auto client = Client("floe:s3cret");
  token();
  token();
  EXPECT_TRUE(client->ListNamespaces().ok());
}

}  // namespace
}  // namespace floe::catalog
