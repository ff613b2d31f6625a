#include "floe/catalog/catalog_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "floe/catalog/sql_database.h"

namespace floe::catalog {
namespace {

using Options = std::map<std::string, std::string>;

std::string Error(const Options& options) {
  Result<CatalogConfig> c = ParseCatalogOptions(options);
  return c.ok() ? "" : c.status().ToString();
}

TEST(ParseCatalogOptions, HadoopIsTheDefaultAndKeepsAnAbsoluteWarehouse) {
  CatalogConfig c = ParseCatalogOptions({{"warehouse", "file:///data/wh"}}).ValueOrDie();
  EXPECT_EQ(c.type, CatalogConfig::Type::kHadoop);
  EXPECT_EQ(c.warehouse, "/data/wh");
  EXPECT_EQ(c.Describe(), "filesystem catalog at /data/wh");
  EXPECT_NE(Error({}).find("'warehouse' is required"), std::string::npos);
  EXPECT_NE(Error({{"warehouse", "/w"}, {"uri", "jdbc:sqlite:x"}}).find("'uri' is for"),
            std::string::npos);
}

TEST(ParseCatalogOptions, JdbcByTypeOrByIcebergsClassName) {
  Options o = {{"catalog-type", "JDBC"}, {"uri", "jdbc:postgresql://db:5432/lake"},
               {"warehouse", "/w"},      {"catalog-name", "prod"},
               {"jdbc.user", "floe"},    {"jdbc.password", "s3cret"}};
  CatalogConfig c = ParseCatalogOptions(o).ValueOrDie();
  EXPECT_EQ(c.type, CatalogConfig::Type::kJdbc);
  EXPECT_EQ(c.name, "prod");
  EXPECT_EQ(c.user, "floe");
  EXPECT_EQ(c.password, "s3cret");
  EXPECT_EQ(c.Describe(), "jdbc catalog 'prod' at jdbc:postgresql://db:5432/lake, warehouse /w");
  o.erase("catalog-type");
  o["catalog-impl"] = "org.apache.iceberg.jdbc.JdbcCatalog";
  EXPECT_EQ(ParseCatalogOptions(o).ValueOrDie().type, CatalogConfig::Type::kJdbc);
  o["catalog-type"] = "jdbc";
  EXPECT_NE(Error(o).find("both set"), std::string::npos);
  EXPECT_EQ(ParseCatalogOptions(
                {{"catalog-type", "jdbc"}, {"uri", "jdbc:sqlite:cat.db"}, {"warehouse", "/w"}})
                .ValueOrDie()
                .name,
            "default_catalog");
}

TEST(ParseCatalogOptions, RefusalsNameTheRuleAndNeverThePassword) {
  EXPECT_NE(
      Error({{"catalog-type", "hive"}, {"warehouse", "/w"}}).find("'hive' is not implemented"),
      std::string::npos);
  EXPECT_NE(Error({{"catalog-impl", "com.example.Mine"}, {"warehouse", "/w"}})
                .find("org.apache.iceberg.jdbc.JdbcCatalog"),
            std::string::npos);
  std::string bad_uri = Error({{"catalog-type", "jdbc"},
                               {"uri", "mysql://u:hunter2@h/db?password=hunter2"},
                               {"warehouse", "/w"}});
  EXPECT_NE(bad_uri.find("jdbc:postgresql://HOST"), std::string::npos) << bad_uri;
  EXPECT_EQ(bad_uri.find("hunter2"), std::string::npos) << bad_uri;
  for (const char* credential : {"jdbc.user", "jdbc.password"}) {
    EXPECT_NE(Error({{"catalog-type", "jdbc"},
                     {"uri", "jdbc:sqlite:c.db"},
                     {"warehouse", "/w"},
                     {credential, "x"}})
                  .find("SQLite has no users"),
              std::string::npos)
        << credential;
  }
  EXPECT_NE(Error({{"catalog-type", "jdbc"},
                   {"uri", "jdbc:sqlite:c.db"},
                   {"warehouse", "/w"},
                   {"catalog-name", "a b"}})
                .find("'catalog-name'"),
            std::string::npos);
  // The filesystem catalog itself refuses object storage, naming the catalogs that work.
  Result<std::unique_ptr<iceberg::Catalog>> on_s3 =
      OpenCatalog(ParseCatalogOptions({{"warehouse", "s3://bucket/wh"}}).ValueOrDie());
  ASSERT_FALSE(on_s3.ok());
  EXPECT_NE(on_s3.status().message().find("'catalog-type' = 'jdbc'"), std::string::npos);
  EXPECT_NE(Error({{"warehouse", "hdfs://nn/wh"}})
                .find("local paths, file: URIs and s3:// URIs, not 'hdfs:'"),
            std::string::npos);
}

TEST(ParseCatalogOptions, RestTakesAnHttpUriAndKeepsItsSecretsOutOfTheDescription) {
  Options o = {{"catalog-type", "rest"},
               {"uri", "http://127.0.0.1:8181/api"},
               {"warehouse", "lake"},
               {"credential", "floe:s3cret"}};
  CatalogConfig c = ParseCatalogOptions(o).ValueOrDie();
  EXPECT_EQ(c.type, CatalogConfig::Type::kRest);
  EXPECT_EQ(c.warehouse, "lake");  // the server's to interpret, not a local path
  EXPECT_EQ(c.credential, "floe:s3cret");
  EXPECT_EQ(c.Describe(), "rest catalog at http://127.0.0.1:8181/api, warehouse lake");
  o.erase("catalog-type");
  o["catalog-impl"] = "org.apache.iceberg.rest.RESTCatalog";
  EXPECT_EQ(ParseCatalogOptions(o).ValueOrDie().type, CatalogConfig::Type::kRest);
  EXPECT_NE(Error({{"catalog-type", "rest"}, {"uri", "jdbc:sqlite:x.db"}}).find("http://"),
            std::string::npos);
  std::string misplaced = Error({{"catalog-type", "jdbc"},
                                 {"uri", "jdbc:sqlite:x.db"},
                                 {"warehouse", "/w"},
                                 {"credential", "floe:s3cret"}});
  EXPECT_NE(misplaced.find("option 'credential' is for 'catalog-type' = 'rest'"), std::string::npos)
      << misplaced;
  EXPECT_EQ(misplaced.find("s3cret"), std::string::npos) << misplaced;
}

TEST(ParseCatalogOptions, IcebergsS3PropertiesBecomeTheCatalogsOwnS3Settings) {
  const std::string dir =
      ::testing::TempDir() + "/floe_catalog_config_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  Options o = {{"catalog-type", "jdbc"},           {"uri", "jdbc:sqlite:" + dir + "/c.db"},
               {"warehouse", "s3://lake/wh/"},     {"s3.endpoint", "http://127.0.0.1:9000"},
               {"s3.path-style-access", "true"},   {"s3.access-key-id", "AK"},
               {"s3.secret-access-key", "s3cret"}, {"client.region", "eu-west-1"}};
  CatalogConfig c = ParseCatalogOptions(o).ValueOrDie();
  EXPECT_EQ(c.warehouse, "s3://lake/wh");
  EXPECT_EQ(c.s3_options.size(), 5u);
  EXPECT_EQ(c.Describe().find("s3cret"), std::string::npos);
  // Opening touches no object (S3 has no directories to create).
  std::unique_ptr<iceberg::Catalog> catalog = OpenCatalog(c).ValueOrDie();
  io::S3Config s3 = catalog->file_io().s3_config().value();
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(s3.path_style);
  EXPECT_EQ(s3.access_key_id, "AK");
  EXPECT_EQ(s3.region, "eu-west-1");
  // Another catalog's settings are its own.
  o["s3.access-key-id"] = "other";
  o["catalog-name"] = "other";
  std::unique_ptr<iceberg::Catalog> other =
      OpenCatalog(ParseCatalogOptions(o).ValueOrDie()).ValueOrDie();
  EXPECT_EQ(other->file_io().s3_config()->access_key_id, "other");
  EXPECT_EQ(catalog->file_io().s3_config()->access_key_id, "AK");
  o["s3.path-style-access"] = "yes";
  EXPECT_NE(Error(o).find("'s3.path-style-access' must be 'true' or 'false'"), std::string::npos);
  o["s3.path-style-access"] = "true";
  o["s3.endpoint"] = "ftp://x";
  std::string bad = Error(o);
  EXPECT_NE(bad.find("http(s)://HOST"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("s3cret"), std::string::npos) << bad;
  EXPECT_TRUE(ParseCatalogOptions({{"warehouse", "/w"}}).ValueOrDie().s3_options.empty());
  std::filesystem::remove_all(dir);
}

TEST(RedactPassword, HidesUserInfoAndQueryPasswords) {
  EXPECT_EQ(RedactPassword("postgresql://u:pw@h/db?password=pw&sslmode=disable"),
            "postgresql://u:***@h/db?password=***&sslmode=disable");
  EXPECT_EQ(RedactPassword("postgresql:///db?host=/tmp/x"), "postgresql:///db?host=/tmp/x");
}

}  // namespace
}  // namespace floe::catalog
