#include "floe/kafka/kafka_client.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "floe/kafka/kafka_internal.h"

#include "floe/common/closest_match.h"
#include "floe/common/log.h"
#include "floe/kafka/property_names.h"

namespace floe::kafka {

static_assert(KafkaProducer::kAnyPartition == RD_KAFKA_PARTITION_UA);

struct KafkaProducer::Impl {
  // Written by the delivery callback (in poll). Declared before `rk`: the handle goes first.
  int64_t failed = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  bool keep = false;
  std::vector<Delivery> reports;
  HandlePtr rk;
};

struct KafkaConsumer::Impl {
  // Group members only. Declared before `rk`: the handle (whose close may still call the
  // rebalance callback) goes first.
  RebalanceListener listener;
  Status rebalance_error;  // the first failure in the rebalance callback, reported by Poll
  HandlePtr rk;
  QueuePtr queue;  // the consumer queue, for PollWaiting; released before `rk`
  std::vector<rd_kafka_message_t*> taken;  // PollWaiting's buffer, kept between calls
};

namespace {

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

Result<ConfPtr> MakeConf(const Properties& properties) {
  ConfPtr conf(rd_kafka_conf_new());
  char err[512];
  for (const auto& [key, value] : properties) {
    rd_kafka_conf_res_t res =
        rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), err, sizeof(err));
    if (res != RD_KAFKA_CONF_OK) {
      std::string hint = res == RD_KAFKA_CONF_UNKNOWN ? DidYouMean(key, KnownPropertyNames()) : "";
      return Status::InvalidArgument("kafka property '" + key + "' = '" + value + "': " + err +
                                     hint);
    }
  }
  return conf;
}

Result<HandlePtr> MakeHandle(rd_kafka_type_t type, ConfPtr conf) {
  char err[512];
  // rd_kafka_new takes ownership of conf on success only.
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), err, sizeof(err));
  if (rk == nullptr) return Status::InvalidArgument(std::string("kafka client: ") + err);
  (void)conf.release();
  return HandlePtr(rk);
}

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* state = static_cast<KafkaProducer::Impl*>(opaque);
  if (state->keep) {
    Status status;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* topic = m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "";
      status = KafkaStatus(m->err, std::string("deliver to topic '") + topic + "' partition " +
                                       std::to_string(m->partition));
    }
    state->reports.push_back(Delivery{reinterpret_cast<uintptr_t>(m->_private), m->partition,
                                      m->offset, std::move(status)});
  }
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  if (state->failed++ == 0) state->first_error = m->err;
}

void OnCommit(rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t*, void*) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
  // Committed offsets are for monitoring only; the job's positions are in its checkpoints.
  LogWarn("kafka: committing group offsets failed (monitoring only): %s", rd_kafka_err2str(err));
}

void AddToList(rd_kafka_topic_partition_list_t* list, const std::string& topic,
               const PartitionOffsets& offsets) {
  for (const auto& [partition, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset = offset;
  }
}

PartitionListPtr MakeList(const std::string& topic, const PartitionOffsets& offsets) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  AddToList(list.get(), topic, offsets);
  return list;
}

Status ListErrors(const rd_kafka_topic_partition_list_t* list, std::string_view what) {
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaStatus(list->elems[i].err, std::string(what) + " (topic '" +
                                                 list->elems[i].topic + "' partition " +
                                                 std::to_string(list->elems[i].partition) + ")");
    }
  }
  return Status::OK();
}

PartitionOffsets ToOffsets(const rd_kafka_topic_partition_list_t* list) {
  PartitionOffsets out;
  for (int i = 0; i < list->cnt; ++i) out[list->elems[i].partition] = list->elems[i].offset;
  return out;
}

// Per topic, the partitions of `list`.
std::map<std::string, std::vector<int32_t>> ByTopic(const rd_kafka_topic_partition_list_t* list) {
  std::map<std::string, std::vector<int32_t>> out;
  for (int i = 0; i < list->cnt; ++i) out[list->elems[i].topic].push_back(list->elems[i].partition);
  return out;
}

Status ErrorStatus(rd_kafka_error_t* error, const std::string& what) {
  if (error == nullptr) return Status::OK();
  return KafkaStatus(error, what);  // destroys `error`
}

// The listener's answers for an assignment, written into `parts` (the offsets librdkafka starts
// each partition from).
Status ChooseOffsets(KafkaConsumer::Impl* impl, rd_kafka_topic_partition_list_t* parts) {
  for (auto& [topic, partitions] : ByTopic(parts)) {
    FLOE_ASSIGN_OR_RAISE(
        PartitionOffsets offsets,
        impl->listener(GroupChange{GroupChange::Kind::kAssigned, topic, std::move(partitions)}));
    for (const auto& [partition, offset] : offsets) {
      rd_kafka_topic_partition_t* p =
          rd_kafka_topic_partition_list_find(parts, topic.c_str(), partition);
      if (p == nullptr) {
        return Status::Internal("kafka rebalance: an offset for topic '" + topic + "' partition " +
                                std::to_string(partition) + ", which this member was not assigned");
      }
      p->offset = offset;
    }
  }
  return Status::OK();
}

// librdkafka's rebalance callback (cooperative protocol: incremental assign and unassign).
// Runs inside rd_kafka_consumer_poll on the polling thread.
void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                 void* opaque) {
  auto* impl = static_cast<KafkaConsumer::Impl*>(opaque);
  Status st;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    st = ChooseOffsets(impl, parts);
    // Assigned even when the listener failed: the group stays consistent and Poll fails.
    Status assigned = ErrorStatus(rd_kafka_incremental_assign(rk, parts), "kafka group: assign");
    if (st.ok()) st = std::move(assigned);
  } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    const GroupChange::Kind kind =
        rd_kafka_assignment_lost(rk) ? GroupChange::Kind::kLost : GroupChange::Kind::kRevoked;
    for (auto& [topic, partitions] : ByTopic(parts)) {
      Result<PartitionOffsets> r = impl->listener(GroupChange{kind, topic, std::move(partitions)});
      if (st.ok() && !r.ok()) st = r.status();
    }
    Status unassigned =
        ErrorStatus(rd_kafka_incremental_unassign(rk, parts), "kafka group: unassign");
    if (st.ok()) st = std::move(unassigned);
  } else {
    st = KafkaStatus(err, "kafka group: rebalance");
  }
  if (!st.ok() && impl->rebalance_error.ok()) impl->rebalance_error = std::move(st);
}

}  // namespace

bool IsRetryable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__RETRY:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FETCH_SESSION_ID_NOT_FOUND:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
      return true;
    default:
      return false;
  }
}

Status KafkaStatus(rd_kafka_resp_err_t err, std::string_view what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  std::string msg =
      std::string(what) + ": " + rd_kafka_err2name(err) + " (" + rd_kafka_err2str(err) + ")";
  if (IsRetryable(err)) return Status::Unavailable("kafka (retryable) " + msg);
  switch (err) {
    // Retriable in Kafka: a topic or partition just created is unknown to some brokers (and to
    // librdkafka's cached metadata) until metadata propagates. Unavailable keeps the restart
    // strategy; InvalidArgument before the first checkpoint would end the job for good. Not in
    // IsRetryable: poll loops that skip retryable errors would wait forever on a deleted topic.
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return Status::Unavailable("kafka (retryable) " + msg);
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    // transaction.timeout.ms above the brokers' transaction.max.timeout.ms: every attempt
    // repeats it.
    case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      return Status::InvalidArgument("kafka " + msg);
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return Status::Internal("kafka (fatal) " + msg);
    default:
      return Status::IOError("kafka " + msg);
  }
}

Status KafkaStatus(rd_kafka_error_t* error, std::string_view what) {
  if (error == nullptr) return Status::OK();
  rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  bool fatal = rd_kafka_error_is_fatal(error);
  bool retriable = rd_kafka_error_is_retriable(error);
  std::string msg = std::string(what) + ": " + rd_kafka_error_name(error) + " (" +
                    rd_kafka_error_string(error) + ")";
  rd_kafka_error_destroy(error);
  // librdkafka raises this as a fatal producer error, but it is the configuration's.
  if (code == RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT) {
    return Status::InvalidArgument("kafka " + msg);
  }
  if (fatal) return Status::Internal("kafka (fatal) " + msg);
  if (retriable) return Status::Unavailable("kafka (retryable) " + msg);
  return KafkaStatus(code, what);
}

Status CheckProperties(const Properties& properties) {
  FLOE_ASSIGN_OR_RAISE(ConfPtr conf, MakeConf(properties));
  (void)conf;
  return Status::OK();
}

void HandleDeleter::operator()(rd_kafka_t* rk) const {
  if (rd_kafka_type(rk) == RD_KAFKA_CONSUMER) (void)rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

Result<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                               std::chrono::milliseconds timeout) {
  // All topics, not the one: asking for one topic auto-creates it on brokers (and the mock)
  // that allow it, so a misspelt name would silently read an empty new topic.
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk, /*all_topics=*/1, nullptr, &md, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(err, "metadata of topic '" + topic + "'");
  }
  Result<int32_t> out = Status::NotFound("kafka topic '" + topic + "' does not exist");
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& mt = md->topics[i];
    if (topic != mt.topic) continue;
    if (mt.err == RD_KAFKA_RESP_ERR_NO_ERROR && mt.partition_cnt > 0) {
      out = static_cast<int32_t>(mt.partition_cnt);
    } else if (mt.err != RD_KAFKA_RESP_ERR_NO_ERROR &&
               mt.err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      out = KafkaStatus(mt.err, "metadata of topic '" + topic + "'");
    }
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Make(const Properties& properties,
                                                           bool keep_deliveries) {
  FLOE_ASSIGN_OR_RAISE(ConfPtr conf, MakeConf(properties));
  auto impl = std::make_unique<Impl>();
  impl->keep = keep_deliveries;
  rd_kafka_conf_set_dr_msg_cb(conf.get(), OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), impl.get());
  FLOE_ASSIGN_OR_RAISE(impl->rk, MakeHandle(RD_KAFKA_PRODUCER, std::move(conf)));
  return std::make_unique<KafkaProducer>(std::move(impl));
}

KafkaProducer::KafkaProducer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KafkaProducer::~KafkaProducer() = default;

Result<int32_t> KafkaProducer::PartitionCount(const std::string& topic,
                                              std::chrono::milliseconds timeout) {
  return kafka::PartitionCount(impl_->rk.get(), topic, timeout);
}

Status KafkaProducer::Produce(const std::string& topic, int32_t partition, std::string_view value,
                              std::string_view key, uint64_t tag) {
  // A non-null pointer even for an empty value: null is a tombstone.
  return ProduceValue(topic, partition, value.data() == nullptr ? "" : value.data(), value.size(),
                      key, tag);
}

Status KafkaProducer::ProduceTombstone(const std::string& topic, int32_t partition,
                                       std::string_view key) {
  return ProduceValue(topic, partition, nullptr, 0, key, /*tag=*/0);
}

Status KafkaProducer::ProduceValue(const std::string& topic, int32_t partition, const char* value,
                                   size_t value_size, std::string_view key, uint64_t tag) {
  rd_kafka_t* rk = impl_->rk.get();
  for (;;) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value), value_size),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : const_cast<char*>(key.data()), key.size()),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(tag))), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk, 100);  // serve delivery reports, which frees queue space
      continue;
    }
    rd_kafka_poll(rk, 0);
    return KafkaStatus(err,
                       "produce to topic '" + topic + "' partition " + std::to_string(partition));
  }
}

Status KafkaProducer::Flush(std::chrono::milliseconds timeout) {
  rd_kafka_resp_err_t err = rd_kafka_flush(impl_->rk.get(), static_cast<int>(timeout.count()));
  FLOE_RETURN_NOT_OK(KafkaStatus(err, "flush"));
  if (impl_->failed > 0) {
    int64_t failed = impl_->failed;
    impl_->failed = 0;
    return KafkaStatus(impl_->first_error, std::to_string(failed) + " record(s) not delivered");
  }
  return Status::OK();
}

void KafkaProducer::PurgeQueued() {
  // Blocking purge: the purged records' reports are queued when it returns.
  (void)rd_kafka_purge(impl_->rk.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  (void)rd_kafka_poll(impl_->rk.get(), 0);  // serves them
}

std::vector<Delivery> KafkaProducer::TakeDeliveries() {
  std::vector<Delivery> out;
  out.swap(impl_->reports);
  return out;
}

TxnResult KafkaProducer::InitTransactions(std::chrono::milliseconds timeout) {
  return KafkaTxnResult(
      rd_kafka_init_transactions(impl_->rk.get(), static_cast<int>(timeout.count())),
      "init_transactions");
}

TxnResult KafkaProducer::BeginTransaction() {
  return KafkaTxnResult(rd_kafka_begin_transaction(impl_->rk.get()), "begin_transaction");
}

TxnResult KafkaProducer::CommitTransaction(std::chrono::milliseconds timeout) {
  return KafkaTxnResult(
      rd_kafka_commit_transaction(impl_->rk.get(), static_cast<int>(timeout.count())),
      "commit_transaction");
}

TxnResult KafkaProducer::AbortTransaction(std::chrono::milliseconds timeout) {
  return KafkaTxnResult(
      rd_kafka_abort_transaction(impl_->rk.get(), static_cast<int>(timeout.count())),
      "abort_transaction");
}

std::string_view TxnErrorKindName(TxnErrorKind kind) {
  switch (kind) {
    case TxnErrorKind::kNone:
      return "ok";
    case TxnErrorKind::kRetriable:
      return "retriable";
    case TxnErrorKind::kRequiresAbort:
      return "requires abort";
    case TxnErrorKind::kFatal:
      return "fatal";
    case TxnErrorKind::kOther:
      return "error";
  }
  return "error";
}

TxnResult KafkaTxnResult(rd_kafka_error_t* error, std::string_view what) {
  if (error == nullptr) return TxnResult{};
  TxnErrorKind kind = rd_kafka_error_is_fatal(error)             ? TxnErrorKind::kFatal
                      : rd_kafka_error_txn_requires_abort(error) ? TxnErrorKind::kRequiresAbort
                      : rd_kafka_error_is_retriable(error)       ? TxnErrorKind::kRetriable
                                                                 : TxnErrorKind::kOther;
  Status st = KafkaStatus(error, what);  // destroys `error`
  if (kind == TxnErrorKind::kRequiresAbort) {
    st = Status(st.code(), st.message() + " (the transaction must be aborted)");
  }
  return TxnResult{kind, std::move(st)};
}

namespace {

// A consumer over `properties`, with a rebalance listener when it is a group member.
Result<std::unique_ptr<KafkaConsumer>> MakeConsumer(Properties props, RebalanceListener listener) {
  // Positions are floe's (checkpoints, tables); never let librdkafka commit or store on its own.
  props["enable.auto.commit"] = "false";
  props["enable.auto.offset.store"] = "false";
  FLOE_ASSIGN_OR_RAISE(ConfPtr conf, MakeConf(props));
  rd_kafka_conf_set_offset_commit_cb(conf.get(), OnCommit);
  auto impl = std::make_unique<KafkaConsumer::Impl>();
  if (listener) {
    rd_kafka_conf_set_rebalance_cb(conf.get(), OnRebalance);
    impl->listener = std::move(listener);
    rd_kafka_conf_set_opaque(conf.get(), impl.get());
  }
  FLOE_ASSIGN_OR_RAISE(impl->rk, MakeHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  return std::make_unique<KafkaConsumer>(std::move(impl));
}

}  // namespace

Result<std::unique_ptr<KafkaConsumer>> KafkaConsumer::Make(const Properties& properties) {
  Properties props = properties;
  if (props.count("group.id") == 0) props["group.id"] = "floe-no-group";  // required by the API
  return MakeConsumer(std::move(props), nullptr);
}

Result<std::unique_ptr<KafkaConsumer>> KafkaConsumer::MakeMember(const Properties& properties,
                                                                 RebalanceListener listener) {
  if (properties.count("group.id") == 0) {
    return Status::InvalidArgument("kafka group member: 'group.id' is required");
  }
  Properties props = properties;
  auto strategy = props.find("partition.assignment.strategy");
  if (strategy != props.end() && strategy->second != "cooperative-sticky") {
    return Status::InvalidArgument(
        "kafka property 'partition.assignment.strategy' = '" + strategy->second +
        "': a floe instance joins its group with 'cooperative-sticky' (members keep the "
        "partitions that do not move)");
  }
  props["partition.assignment.strategy"] = "cooperative-sticky";
  if (!listener)
    return Status::InvalidArgument("kafka group member: a rebalance listener is required");
  return MakeConsumer(std::move(props), std::move(listener));
}

Status KafkaConsumer::Subscribe(const std::vector<std::string>& topics) {
  if (!impl_->listener) return Status::InvalidArgument("kafka: Subscribe needs a group member");
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())));
  for (const std::string& t : topics) {
    rd_kafka_topic_partition_list_add(list.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  return KafkaStatus(rd_kafka_subscribe(impl_->rk.get(), list.get()), "kafka group: subscribe");
}

Result<std::map<std::string, std::vector<int32_t>>> KafkaConsumer::Assignment() {
  rd_kafka_topic_partition_list_t* raw = nullptr;
  FLOE_RETURN_NOT_OK(KafkaStatus(rd_kafka_assignment(impl_->rk.get(), &raw), "kafka: assignment"));
  PartitionListPtr list(raw);
  return ByTopic(list.get());
}

Status KafkaConsumer::Close() {
  if (!impl_->listener) return Status::OK();
  FLOE_RETURN_NOT_OK(KafkaStatus(rd_kafka_consumer_close(impl_->rk.get()), "kafka group: leave"));
  Status st = std::move(impl_->rebalance_error);
  impl_->rebalance_error = Status::OK();
  return st;
}

KafkaConsumer::KafkaConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KafkaConsumer::~KafkaConsumer() = default;

Result<int32_t> KafkaConsumer::PartitionCount(const std::string& topic,
                                              std::chrono::milliseconds timeout) {
  return kafka::PartitionCount(impl_->rk.get(), topic, timeout);
}

Result<std::pair<int64_t, int64_t>> KafkaConsumer::Watermarks(const std::string& topic,
                                                              int32_t partition,
                                                              std::chrono::milliseconds timeout) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      impl_->rk.get(), topic.c_str(), partition, &low, &high, static_cast<int>(timeout.count()));
  FLOE_RETURN_NOT_OK(KafkaStatus(
      err, "watermarks of topic '" + topic + "' partition " + std::to_string(partition)));
  return std::make_pair(low, high);
}

std::optional<int64_t> KafkaConsumer::CachedHighWatermark(const std::string& topic,
                                                          int32_t partition) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err =
      rd_kafka_get_watermark_offsets(impl_->rk.get(), topic.c_str(), partition, &low, &high);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || high < 0) return std::nullopt;
  return high;
}

Result<PartitionOffsets> KafkaConsumer::Committed(const std::string& topic,
                                                  const std::vector<int32_t>& partitions,
                                                  std::chrono::milliseconds timeout) {
  PartitionOffsets want;
  for (int32_t p : partitions) want[p] = RD_KAFKA_OFFSET_INVALID;
  PartitionListPtr list = MakeList(topic, want);
  rd_kafka_resp_err_t err =
      rd_kafka_committed(impl_->rk.get(), list.get(), static_cast<int>(timeout.count()));
  FLOE_RETURN_NOT_OK(KafkaStatus(err, "committed offsets of topic '" + topic + "'"));
  FLOE_RETURN_NOT_OK(ListErrors(list.get(), "committed offsets"));
  return ToOffsets(list.get());
}

Result<PartitionOffsets> KafkaConsumer::OffsetsForTimes(const std::string& topic,
                                                        const std::vector<int32_t>& partitions,
                                                        int64_t timestamp_ms,
                                                        std::chrono::milliseconds timeout) {
  PartitionOffsets want;
  for (int32_t p : partitions) want[p] = timestamp_ms;
  PartitionListPtr list = MakeList(topic, want);
  rd_kafka_resp_err_t err =
      rd_kafka_offsets_for_times(impl_->rk.get(), list.get(), static_cast<int>(timeout.count()));
  FLOE_RETURN_NOT_OK(KafkaStatus(err, "offsets by timestamp of topic '" + topic + "'"));
  FLOE_RETURN_NOT_OK(ListErrors(list.get(), "offsets by timestamp"));
  return ToOffsets(list.get());
}

Status KafkaConsumer::Assign(const std::string& topic, const PartitionOffsets& next_offsets) {
  return AssignAll({{topic, next_offsets}});
}

Status KafkaConsumer::AssignAll(
    const std::map<std::string, PartitionOffsets>& next_offsets_by_topic) {
  int count = 0;
  std::string topics;
  for (const auto& [topic, offsets] : next_offsets_by_topic) {
    count += static_cast<int>(offsets.size());
    topics += (topics.empty() ? "'" : ", '") + topic + "'";
  }
  PartitionListPtr list(rd_kafka_topic_partition_list_new(count));
  for (const auto& [topic, offsets] : next_offsets_by_topic) AddToList(list.get(), topic, offsets);
  return KafkaStatus(
      rd_kafka_assign(impl_->rk.get(), list.get()),
      (next_offsets_by_topic.size() == 1 ? "assign topic " : "assign topics ") + topics);
}

Result<std::optional<ConsumedMessage>> KafkaConsumer::Poll(std::chrono::milliseconds timeout) {
  rd_kafka_message_t* m =
      rd_kafka_consumer_poll(impl_->rk.get(), static_cast<int>(timeout.count()));
  if (!impl_->rebalance_error.ok()) {
    if (m != nullptr) rd_kafka_message_destroy(m);
    Status st = std::move(impl_->rebalance_error);
    impl_->rebalance_error = Status::OK();
    return st;
  }
  if (m == nullptr) return std::optional<ConsumedMessage>();
  return std::optional<ConsumedMessage>(ConsumedMessage(m));
}

Status KafkaConsumer::PollWaiting(size_t max, std::vector<ConsumedMessage>* out) {
  if (impl_->listener) return Status::Internal("kafka: PollWaiting on a group member");
  if (impl_->queue == nullptr) {
    impl_->queue.reset(rd_kafka_queue_get_consumer(impl_->rk.get()));
    if (impl_->queue == nullptr) return Status::Internal("kafka: the consumer has no queue");
  }
  if (impl_->taken.size() < max) impl_->taken.resize(max);
  const ssize_t n =
      rd_kafka_consume_batch_queue(impl_->queue.get(), /*timeout_ms=*/0, impl_->taken.data(), max);
  if (n < 0) return KafkaStatus(rd_kafka_last_error(), "kafka: consume");
  for (ssize_t i = 0; i < n; ++i) out->push_back(ConsumedMessage(impl_->taken[i]));
  return Status::OK();
}

Status KafkaConsumer::CommitAsync(const std::string& topic, const PartitionOffsets& next_offsets) {
  if (next_offsets.empty()) return Status::OK();
  PartitionListPtr list = MakeList(topic, next_offsets);
  return KafkaStatus(rd_kafka_commit(impl_->rk.get(), list.get(), /*async=*/1),
                     "commit offsets of topic '" + topic + "'");
}

Status KafkaConsumer::CommitSync(const std::string& topic, const PartitionOffsets& next_offsets) {
  if (next_offsets.empty()) return Status::OK();
  PartitionListPtr list = MakeList(topic, next_offsets);
  FLOE_RETURN_NOT_OK(KafkaStatus(rd_kafka_commit(impl_->rk.get(), list.get(), /*async=*/0),
                                 "commit offsets of topic '" + topic + "'"));
  return ListErrors(list.get(), "commit offsets");
}

void ConsumedMessage::MessageDeleter::operator()(rd_kafka_message_s* m) const {
  rd_kafka_message_destroy(m);
}

ConsumedMessage::ConsumedMessage(rd_kafka_message_s* m)
    : message_(m), partition_(m->partition), offset_(m->offset) {
  switch (m->err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      kind_ = Kind::kRecord;
      break;
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      kind_ = Kind::kPartitionEnd;
      break;
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      kind_ = Kind::kOffsetReset;
      break;
    default:
      kind_ = Kind::kError;
      break;
  }
  // An error's payload is its message text, not a value.
  if (kind_ == Kind::kRecord && m->payload != nullptr) {
    value_is_null_ = false;
    value_ = std::string_view(static_cast<const char*>(m->payload), m->len);
  }
  if (kind_ == Kind::kRecord && m->key != nullptr) {
    key_ = std::string_view(static_cast<const char*>(m->key), m->key_len);
  }
}

bool ConsumedMessage::key_is_null() const {
  return kind_ != Kind::kRecord || message_->key == nullptr;
}

std::optional<int64_t> ConsumedMessage::timestamp_ms() const {
  if (kind_ != Kind::kRecord) return std::nullopt;
  rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  const int64_t ms = rd_kafka_message_timestamp(message_.get(), &type);
  if (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ms < 0) return std::nullopt;
  return ms;
}

std::string_view ConsumedMessage::timestamp_type() const {
  if (kind_ != Kind::kRecord) return "NoTimestampType";
  rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  (void)rd_kafka_message_timestamp(message_.get(), &type);
  switch (type) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME:
      return "CreateTime";
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME:
      return "LogAppendTime";
    default:
      return "NoTimestampType";
  }
}

bool ConsumedMessage::retryable() const {
  return kind_ == Kind::kError && IsRetryable(message_->err);
}

Status ConsumedMessage::error(std::string_view what) const {
  return KafkaStatus(message_->err, what);
}

std::string_view ConsumedMessage::topic() const {
  if (message_->rkt == nullptr) return {};
  const char* name = rd_kafka_topic_name(message_->rkt);
  return name == nullptr ? std::string_view() : std::string_view(name);
}

std::vector<std::pair<std::string, std::string>> ConsumedMessage::Headers() const {
  std::vector<std::pair<std::string, std::string>> out;
  rd_kafka_headers_t* headers = nullptr;  // owned by the message
  if (kind_ != Kind::kRecord ||
      rd_kafka_message_headers(message_.get(), &headers) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      headers == nullptr) {
    return out;
  }
  out.reserve(rd_kafka_header_cnt(headers));
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    out.emplace_back(name, value == nullptr ? std::string()
                                            : std::string(static_cast<const char*>(value), size));
  }
  return out;
}

Result<PartitionOffsets> ParseSpecificOffsets(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(
        "specific offsets must look like 'partition:0,offset:42;partition:1,offset:300' (" +
        std::string(why) + "), got '" + std::string(text) + "'");
  };
  auto number = [](std::string_view s, int64_t* out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  };
  PartitionOffsets out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) {
      if (end == text.size()) break;
      continue;
    }
    size_t comma = entry.find(',');
    if (comma == std::string_view::npos) return bad("missing ','");
    std::string_view p = entry.substr(0, comma), o = entry.substr(comma + 1);
    constexpr std::string_view kP = "partition:", kO = "offset:";
    if (p.substr(0, kP.size()) != kP || o.substr(0, kO.size()) != kO) {
      return bad("each entry is partition:N,offset:M");
    }
    int64_t partition = 0, offset = 0;
    if (!number(p.substr(kP.size()), &partition) || partition < 0 || partition > INT32_MAX ||
        !number(o.substr(kO.size()), &offset) || offset < 0) {
      return bad("partition and offset are non-negative integers");
    }
    if (!out.emplace(static_cast<int32_t>(partition), offset).second) {
      return bad("partition " + std::to_string(partition) + " appears twice");
    }
    if (end == text.size()) break;
  }
  if (out.empty()) return bad("no entries");
  return out;
}

}  // namespace floe::kafka
