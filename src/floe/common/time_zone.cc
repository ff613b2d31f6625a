#include "floe/common/time_zone.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "floe/common/civil_time.h"
#include "floe/common/log.h"

namespace floe {

namespace {

constexpr int64_t kSecondsPerDay = 86'400;
// Rules of a zone's footer are unrolled into transitions up to this year.
constexpr int64_t kLastRuleYear = 2400;

// Flink's check before java.time.ZoneId.of: offsets written after "UTC" and the short IDs of
// java.time.ZoneId.SHORT_IDS are refused, whatever their case.
bool RefusedByFlink(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::set<std::string, std::less<>> kShortIds = {
      "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST",
      "CTT", "EAT", "ECT", "EST", "HST", "IET", "IST", "JST", "MIT", "MST",
      "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST"};
  return upper.starts_with("UTC+") || upper.starts_with("UTC-") || kShortIds.count(upper) > 0;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// java.time.ZoneOffset.of: +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss, within +-18:00.
bool ParseZoneOffset(std::string_view s, int32_t* seconds) {
  if (s.size() < 2 || (s[0] != '+' && s[0] != '-')) return false;
  const int sign = s[0] == '-' ? -1 : 1;
  std::string_view d = s.substr(1);
  std::string digits;
  if (d.size() == 1 || d.size() == 2 || d.size() == 4 || d.size() == 6) {
    digits = d;
  } else if (d.size() == 5 && d[2] == ':') {
    digits = std::string(d.substr(0, 2)) + std::string(d.substr(3));
  } else if (d.size() == 8 && d[2] == ':' && d[5] == ':') {
    digits = std::string(d.substr(0, 2)) + std::string(d.substr(3, 2)) + std::string(d.substr(6));
  } else {
    return false;
  }
  if (!AllDigits(digits)) return false;
  if (digits.size() == 1) digits = "0" + digits;
  const int h = std::stoi(digits.substr(0, 2));
  const int m = digits.size() >= 4 ? std::stoi(digits.substr(2, 2)) : 0;
  const int sec = digits.size() == 6 ? std::stoi(digits.substr(4, 2)) : 0;
  if (h > 18 || m > 59 || sec > 59 || (h == 18 && (m > 0 || sec > 0))) return false;
  *seconds = sign * (h * 3600 + m * 60 + sec);
  return true;
}

// ---- TZif (RFC 8536) -------------------------------------------------------------------------

class BigEndian {
 public:
  explicit BigEndian(std::string_view data) : data_(data) {}
  bool Skip(uint64_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  bool Read(int bytes, int64_t* v) {
    if (static_cast<size_t>(bytes) > data_.size() - pos_) return false;
    uint64_t u = 0;
    for (int i = 0; i < bytes; ++i) u = (u << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += bytes;
    // Sign-extend 4-byte values.
    *v = bytes == 4 ? static_cast<int64_t>(static_cast<int32_t>(u)) : static_cast<int64_t>(u);
    return true;
  }
  std::string_view rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

struct TzifCounts {
  int64_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;
};

bool ReadHeader(BigEndian& in, char* version, TzifCounts* c) {
  std::string_view magic = in.rest().substr(0, 4);
  if (magic != "TZif" || in.rest().size() < 44) return false;
  *version = in.rest()[4];
  in.Skip(20);
  for (int64_t* v : {&c->isut, &c->isstd, &c->leap, &c->time, &c->type, &c->chars}) {
    if (!in.Read(4, v) || *v < 0 || *v > 1'000'000) return false;
  }
  return c->type >= 1;
}

// ---- the footer's POSIX TZ string (RFC 8536 section 3.3) ---------------------------------------

class PosixRule {
 public:
  explicit PosixRule(std::string_view s) : s_(s) {}

  // "STD offset [DST [offset] [,start[/time],end[/time]]]"; false when it is not one.
  bool Parse() {
    if (!Name() || !Offset(&std_offset_)) return false;
    std_offset_ = -std_offset_;  // POSIX counts west of Greenwich
    if (pos_ == s_.size()) return true;
    if (!Name()) return false;
    has_dst_ = true;
    dst_offset_ = std_offset_ + 3600;
    if (pos_ < s_.size() && s_[pos_] != ',') {
      if (!Offset(&dst_offset_)) return false;
      dst_offset_ = -dst_offset_;
    }
    if (pos_ == s_.size()) {  // POSIX's default rule: the US rule
      start_ = {'M', 3, 2, 0, 7200};
      end_ = {'M', 11, 1, 0, 7200};
      return true;
    }
    return Eat(',') && Rule(&start_) && Eat(',') && Rule(&end_) && pos_ == s_.size();
  }

  int32_t std_offset() const { return static_cast<int32_t>(std_offset_); }
  bool has_dst() const { return has_dst_; }

  // The year's two transitions (to daylight time, back to standard time), as UTC seconds.
  void TransitionsOf(int64_t year, std::vector<TimeZone::Transition>* out) const {
    const int64_t to_dst = DayOf(start_, year) * kSecondsPerDay + start_.time - std_offset_;
    const int64_t to_std = DayOf(end_, year) * kSecondsPerDay + end_.time - dst_offset_;
    out->push_back({to_dst, static_cast<int32_t>(dst_offset_)});
    out->push_back({to_std, static_cast<int32_t>(std_offset_)});
  }

 private:
  struct Date {
    char kind = 'M';  // 'M' month.week.day, 'J' Julian day 1..365 without Feb 29, 'n' 0..365
    int64_t a = 0, b = 0, c = 0;
    int64_t time = 7200;
  };

  static int64_t DayOf(const Date& d, int64_t year) {
    const int64_t jan1 = DaysFromCivil(year, 1, 1);
    if (d.kind == 'J') return jan1 + d.a - 1 + (IsLeapYear(year) && d.a >= 60 ? 1 : 0);
    if (d.kind == 'n') return jan1 + d.a;
    const int month = static_cast<int>(d.a);
    const int64_t first = DaysFromCivil(year, month, 1);
    const int64_t weekday = FloorMod(first + 4, 7);  // 1970-01-01 was a Thursday; 0 = Sunday
    int64_t day = 1 + FloorMod(d.c - weekday, 7) + 7 * (d.b - 1);
    while (day > DaysInMonth(year, month)) day -= 7;
    return first + day - 1;
  }

  bool Eat(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool Name() {
    if (Eat('<')) {
      size_t close = s_.find('>', pos_);
      if (close == std::string_view::npos) return false;
      pos_ = close + 1;
      return true;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ - start >= 3;
  }
  bool Number(int64_t* v) {
    size_t start = pos_;
    *v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) &&
           pos_ - start < 6) {
      *v = *v * 10 + (s_[pos_++] - '0');
    }
    return pos_ > start;
  }
  // [+-]hh[:mm[:ss]] as seconds.
  bool Offset(int64_t* seconds) {
    int64_t sign = 1;
    if (Eat('-')) {
      sign = -1;
    } else {
      Eat('+');
    }
    int64_t h = 0, m = 0, sec = 0;
    if (!Number(&h) || h > 167) return false;
    if (Eat(':') && (!Number(&m) || m > 59 || (Eat(':') && (!Number(&sec) || sec > 59)))) {
      return false;
    }
    *seconds = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool Rule(Date* d) {
    if (Eat('M')) {
      d->kind = 'M';
      if (!Number(&d->a) || !Eat('.') || !Number(&d->b) || !Eat('.') || !Number(&d->c)) {
        return false;
      }
      if (d->a < 1 || d->a > 12 || d->b < 1 || d->b > 5 || d->c > 6) return false;
    } else if (Eat('J')) {
      d->kind = 'J';
      if (!Number(&d->a) || d->a < 1 || d->a > 365) return false;
    } else {
      d->kind = 'n';
      if (!Number(&d->a) || d->a > 365) return false;
    }
    d->time = 7200;
    return !Eat('/') || Offset(&d->time);
  }

  std::string_view s_;
  size_t pos_ = 0;
  int64_t std_offset_ = 0, dst_offset_ = 0;
  bool has_dst_ = false;
  Date start_, end_;
};

// The zone in a TZif file's bytes, or why not.
Result<std::shared_ptr<const TimeZone>> ParseTzif(const std::string& name, std::string_view data) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("time zone file of '" + name + "': " + why);
  };
  BigEndian in(data);
  char version = 0;
  TzifCounts c;
  if (!ReadHeader(in, &version, &c)) return bad("not a TZif file");
  int time_bytes = 4;
  if (version >= '2') {  // skip the 32-bit data to the 64-bit header and data
    if (!in.Skip(c.time * 5 + c.type * 6 + c.chars + c.leap * 8 + c.isstd + c.isut) ||
        !ReadHeader(in, &version, &c)) {
      return bad("truncated");
    }
    time_bytes = 8;
  }
  std::vector<int64_t> times(c.time);
  for (int64_t& t : times) {
    if (!in.Read(time_bytes, &t)) return bad("truncated transition times");
  }
  std::vector<int64_t> type_of(c.time);
  for (int64_t& i : type_of) {
    if (!in.Read(1, &i) || i >= c.type) return bad("bad transition type");
  }
  std::vector<int32_t> offsets(c.type);
  for (int32_t& o : offsets) {
    int64_t utoff = 0, ignored = 0;
    if (!in.Read(4, &utoff) || !in.Read(1, &ignored) || !in.Read(1, &ignored)) {
      return bad("truncated local time types");
    }
    if (utoff < -89'999 || utoff > 93'599) return bad("offset out of range");
    o = static_cast<int32_t>(utoff);
  }
  if (!in.Skip(c.chars + c.leap * (time_bytes + 4) + c.isstd + c.isut)) return bad("truncated");
  std::vector<TimeZone::Transition> transitions;
  int32_t current = offsets[0];
  for (size_t i = 0; i < times.size(); ++i) {
    if (!transitions.empty() && times[i] <= transitions.back().at) return bad("unsorted times");
    const int32_t offset = offsets[type_of[i]];
    if (offset != current) transitions.push_back({times[i], offset});
    current = offset;
  }
  std::string_view footer = in.rest();
  if (version >= '2' && footer.size() >= 2 && footer[0] == '\n') {
    std::string_view tz = footer.substr(1, footer.find('\n', 1) - 1);
    PosixRule rule(tz);
    if (!tz.empty() && !rule.Parse()) return bad("unreadable rule '" + std::string(tz) + "'");
    if (rule.has_dst()) {
      const int64_t last = transitions.empty() ? 0 : transitions.back().at;
      std::vector<TimeZone::Transition> more;
      for (int64_t y = CivilFromDays(FloorDiv(last, kSecondsPerDay)).year; y <= kLastRuleYear;
           ++y) {
        rule.TransitionsOf(y, &more);
      }
      std::sort(more.begin(), more.end(), [](auto& a, auto& b) { return a.at < b.at; });
      for (const TimeZone::Transition& t : more) {
        if (t.at > last && t.offset != current) transitions.push_back(t);
        if (t.at > last) current = t.offset;
      }
    }
  }
  return std::make_shared<const TimeZone>(name, offsets[0], std::move(transitions));
}

// 'default': the zone TZ names, else /etc/localtime, else UTC. A machine whose zone cannot be
// read (no tz database installed) runs in UTC, with a warning, rather than not at all.
Result<std::shared_ptr<const TimeZone>> MachineZone(const std::string& root) {
  std::string name;
  if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
    name = tz[0] == ':' ? tz + 1 : tz;
  } else {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink("/etc/localtime", ec).string();
    if (size_t at = target.find("zoneinfo/"); !ec && at != std::string::npos) {
      name = target.substr(at + 9);
    }
  }
  if (name.empty()) return TimeZone::Utc();
  Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(name, root);
  if (zone.ok()) return zone;
  LogWarn("the machine's time zone '%s' cannot be read (%s); the session zone is UTC", name.c_str(),
          zone.status().ToString().c_str());
  return TimeZone::Utc();
}

}  // namespace

TimeZone::TimeZone(std::string name, int32_t initial_offset, std::vector<Transition> transitions)
    : name_(std::move(name)),
      initial_offset_(initial_offset),
      transitions_(std::move(transitions)) {}

const std::shared_ptr<const TimeZone>& TimeZone::Utc() {
  static const auto* utc = new std::shared_ptr<const TimeZone>(
      std::make_shared<const TimeZone>("UTC", 0, std::vector<Transition>{}));
  return *utc;
}

Result<std::shared_ptr<const TimeZone>> TimeZone::Load(std::string_view name,
                                                       const std::string& root) {
  const std::string given(name);
  if (given == "default") return MachineZone(root);
  if (RefusedByFlink(given)) {
    return Status::InvalidArgument(
        "the supported Zone ID is either a full name such as 'America/Los_Angeles', or a custom "
        "timezone id such as 'GMT-08:00', but configured Zone ID is '" +
        given + "' (Flink's rule)");
  }
  if (given == "Z" || given == "UTC" || given == "GMT" || given == "UT") {
    return std::make_shared<const TimeZone>(given, 0, std::vector<Transition>{});
  }
  std::string_view offset = name;
  for (std::string_view prefix : {"GMT", "UT"}) {
    if (name.starts_with(prefix) && name.size() > prefix.size() &&
        (name[prefix.size()] == '+' || name[prefix.size()] == '-')) {
      offset = name.substr(prefix.size());
    }
  }
  if (!offset.empty() && (offset[0] == '+' || offset[0] == '-')) {
    int32_t seconds = 0;
    if (!ParseZoneOffset(offset, &seconds)) {
      return Status::InvalidArgument("invalid ID for offset-based ZoneId: '" + given +
                                     "' (an offset is +h, +hh, +hh:mm, +hhmm or +hh:mm:ss, at "
                                     "most 18 hours)");
    }
    return std::make_shared<const TimeZone>(given, seconds, std::vector<Transition>{});
  }
  // A region, as java.time's pattern for region IDs allows it; no way out of `root`.
  const bool region_like =
      given.size() >= 2 && std::isalpha(static_cast<unsigned char>(given[0])) &&
      given.find("..") == std::string::npos && std::all_of(given.begin(), given.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("~/._+-").find(c) != std::string_view::npos;
      });
  std::ifstream file;
  if (region_like) file.open(root + "/" + given, std::ios::binary);
  if (!region_like || !file || std::filesystem::is_directory(root + "/" + given)) {
    return Status::InvalidArgument("unknown time zone '" + given +
                                   "': not a region of the tz database (" + root +
                                   ", such as 'Europe/Berlin') nor an offset such as 'GMT+08:00'");
  }
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return ParseTzif(given, bytes);
}

int32_t TimeZone::OffsetAt(int64_t utc_seconds) const {
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_seconds,
                             [](int64_t t, const Transition& x) { return t < x.at; });
  return it == transitions_.begin() ? initial_offset_ : std::prev(it)->offset;
}

int64_t TimeZone::ToLocal(int64_t instant_micros) const {
  if (transitions_.empty()) return instant_micros + int64_t{initial_offset_} * kMicrosPerSecond;
  return instant_micros +
         int64_t{OffsetAt(FloorDiv(instant_micros, kMicrosPerSecond))} * kMicrosPerSecond;
}

TimeZone::Resolved TimeZone::Resolve(int64_t local) const {
  Resolved r;
  // Offsets in effect within two days of `local` (no zone moves by more than a day).
  auto first =
      std::lower_bound(transitions_.begin(), transitions_.end(), local - 2 * kSecondsPerDay,
                       [](const Transition& x, int64_t t) { return x.at < t; });
  auto last = std::lower_bound(first, transitions_.end(), local + 2 * kSecondsPerDay,
                               [](const Transition& x, int64_t t) { return x.at < t; });
  int32_t before = first == transitions_.begin() ? initial_offset_ : std::prev(first)->offset;
  auto consider = [&](int32_t offset) {
    const int64_t t = local - offset;
    if (OffsetAt(t) != offset || r.count == 2 || (r.count == 1 && r.instants[0] == t)) return;
    r.instants[r.count++] = t;
  };
  consider(before);
  for (auto it = first; it != last; ++it) {
    const int32_t previous = it == transitions_.begin() ? initial_offset_ : std::prev(it)->offset;
    consider(it->offset);
    if (it->at + previous <= local && local < it->at + it->offset) {
      r.gap = &*it;
      r.offset_before_gap = previous;
    }
  }
  if (r.count == 2 && r.instants[0] > r.instants[1]) std::swap(r.instants[0], r.instants[1]);
  return r;
}

int64_t TimeZone::ToInstant(int64_t local_micros) const {
  if (transitions_.empty()) return local_micros - int64_t{initial_offset_} * kMicrosPerSecond;
  const int64_t seconds = FloorDiv(local_micros, kMicrosPerSecond);
  const int64_t fraction = local_micros - seconds * kMicrosPerSecond;
  const Resolved r = Resolve(seconds);
  if (r.count > 0) return r.instants[0] * kMicrosPerSecond + fraction;
  // In a gap: java.time moves the time later by the gap's length.
  return (seconds - r.offset_before_gap) * kMicrosPerSecond + fraction;
}

int64_t TimeZone::ToFiringInstant(int64_t local_micros) const {
  if (transitions_.empty()) return local_micros - int64_t{initial_offset_} * kMicrosPerSecond;
  const int64_t seconds = FloorDiv(local_micros, kMicrosPerSecond);
  const int64_t fraction = local_micros - seconds * kMicrosPerSecond;
  const Resolved r = Resolve(seconds);
  if (r.count > 0) return r.instants[r.count - 1] * kMicrosPerSecond + fraction;
  return r.gap != nullptr ? r.gap->at * kMicrosPerSecond
                          : (seconds - r.offset_before_gap) * kMicrosPerSecond;
}

}  // namespace floe
