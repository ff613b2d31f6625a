#include "floe/connectors/partition_claims.h"

#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::connectors {

std::string ClaimSplit(const PartitionClaim& claim) {
  return claim.partition.ToString() + "/" + std::to_string(claim.generation);
}

std::string ClaimsToJson(const std::vector<PartitionClaim>& claims) {
  Json list = Json::array();
  for (const PartitionClaim& c : claims) {
    Json j = Json::object();
    j["topic"] = c.partition.topic;
    j["partition"] = c.partition.partition;
    j["generation"] = c.generation;
    j["from"] = c.from ? Json(*c.from) : Json(nullptr);
    j["next"] = c.next;
    if (c.topic_partitions > 0) j["topic_partitions"] = c.topic_partitions;
    list.push_back(std::move(j));
  }
  Json out = Json::object();
  out["claims"] = std::move(list);
  return DumpJson(out);
}

Result<std::vector<PartitionClaim>> ClaimsFromJson(std::string_view json, std::string_view what) {
  const JsonPath at{std::string(what)};
  FLOE_ASSIGN_OR_RAISE(Json doc, ParseJson(json, at));
  JsonObject<Json> root(doc, at);
  const Json* list = nullptr;
  FLOE_RETURN_NOT_OK(root.RequiredArray("claims", &list));
  std::vector<PartitionClaim> out;
  for (size_t i = 0; i < list->size(); ++i) {
    JsonObject<Json> o((*list)[i], at.Child("claims").Index(i));
    PartitionClaim c;
    FLOE_RETURN_NOT_OK(o.Required("topic", &c.partition.topic));
    FLOE_RETURN_NOT_OK(o.Required("partition", &c.partition.partition));
    FLOE_RETURN_NOT_OK(o.Required("generation", &c.generation));
    FLOE_RETURN_NOT_OK(o.Required("from", &c.from));
    FLOE_RETURN_NOT_OK(o.Required("next", &c.next));
    FLOE_RETURN_NOT_OK(o.Get("topic_partitions", &c.topic_partitions));
    if (c.partition.partition < 0 || c.next < 0 || (c.from && (*c.from < 0 || *c.from > c.next))) {
      return o.at().Error("partition, from and next must be offsets with from <= next");
    }
    if (c.topic_partitions < 0 ||
        (c.topic_partitions > 0 && c.partition.partition >= c.topic_partitions)) {
      return o.at().Error("topic_partitions must be a partition count above the partition");
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace floe::connectors
