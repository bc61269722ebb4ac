// dbcppp-decode: a native reference decoder for timing `candec decode` against.
//
// It reads a candump -l capture, loads DBC files per interface with dbcppp 3.x, decodes every
// frame through dbcppp's own signal decoder (ISignal::Decode, ISignal::RawToPhys) and writes one
// line per decoded value, as JSON lines with the keys candec writes or as CSV with candec's
// columns:
//
//	dbcppp-decode [--format json|csv|none] [--stats] --dbc [IFACE=]FILE ... CAPTURE
//
// The program is meant to be a fair native competitor, not a naive one: each DBC is parsed once
// into a table keyed by CAN ID, every string that repeats (the frame prefix, "Msg.Sig", units,
// labels) is escaped once, the capture is read in large blocks, numbers are formatted with
// std::to_chars and the output goes through one large buffer written with fwrite. --format none
// decodes and throws the values away (the cost of parsing and decoding alone); --stats prints
// where the time went.
//
// What it writes follows docs/decode-output.md:
//   - only the signals of the active multiplexer branch (simple and SG_MUL_VAL_ multiplexing);
//   - a frame matches a message only when the ID and the 11/29-bit format agree;
//   - remote and error frames are skipped; a signal that does not fit a short frame is left out;
//   - an integer signal with integer factor and offset is written as an integer; other values are
//     rounded to the decimal places of factor and offset and written in shortest form, float32
//     signals in their shortest float32 form, always with a '.' or an exponent;
//   - NaN and infinities are null (JSON) or empty (CSV) with "nonfinite"; "oor" when the value as
//     written is outside minimum..maximum (where minimum < maximum); "unit" and "label" when they apply.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbcppp/Network.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

enum class Format { JSON, CSV, None };

// A signal of a message, with everything its output needs prepared once.
struct Sig {
    const dbcppp::ISignal* sig = nullptr;
    std::string json_name;  // "Msg.Sig","value":   (JSON)
    std::string csv_name;   // Msg.Sig,             (CSV)
    std::string json_unit;  // ,"unit":"..."        (empty when the DBC has none)
    std::string csv_unit;   // the unit, quoted if it must be
    bool integral = false;  // integer signal with integer factor and offset
    bool direct = false;    // integral with factor 1 and offset 0: the raw value is the value
    bool is_signed = false;
    bool float32 = false;
    int decimals = -1;      // decimal places to round to (-1: do not round)
    bool has_range = false;
    double minimum = 0, maximum = 0;
    unsigned min_bytes = 0; // frame bytes the signal needs
    // Value table: raw value (sign-extended for signed signals) -> label, escaped for each format.
    std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> labels;
    // Multiplexing: -1 when the signal is always present; else the index of the switch signal in
    // the message and the raw ranges for which this signal is present.
    int mux_switch = -1;
    std::vector<std::pair<uint64_t, uint64_t>> mux_ranges;
};

struct Msg {
    const dbcppp::IMessage* msg = nullptr;
    std::vector<Sig> sigs;
};

struct Bus {
    std::string name;  // empty: every interface
    std::vector<std::unique_ptr<dbcppp::INetwork>> nets;
    std::unordered_map<uint32_t, Msg> msgs;  // keyed by ID, bit 31 set for 29-bit IDs (as in DBC)
};

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                out += b;
            } else {
                out += char(c);
            }
        }
    }
    out += '"';
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

// Decimal places of x's shortest form (0.01 -> 2, 5 -> 0, 1e-05 -> 5); -1 when not representable.
int decimal_places(double x) {
    char b[64];
    auto r = std::to_chars(b, b + sizeof b, x);
    std::string_view s(b, r.ptr - b);
    int exp = 0;
    if (auto e = s.find('e'); e != std::string_view::npos) {
        exp = std::atoi(std::string(s.substr(e + 1)).c_str());
        s = s.substr(0, e);
    }
    int frac = 0;
    if (auto dot = s.find('.'); dot != std::string_view::npos) frac = int(s.size() - dot - 1);
    int d = frac - exp;
    return d < 0 ? 0 : d;
}

bool is_integer(double x) { return std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.007199254740992e15; }

// Bytes of frame data a signal needs (the signal fits a frame of at least this length).
unsigned bytes_needed(const dbcppp::ISignal& s) {
    uint64_t start = s.StartBit(), size = s.BitSize();
    if (s.ByteOrder() == dbcppp::ISignal::EByteOrder::LittleEndian) return unsigned((start + size + 7) / 8);
    // Motorola: the MSB is at start, the signal runs down through the byte and on into the next.
    uint64_t fsize = size + (7 - start % 8);
    return unsigned(start / 8 + (fsize - 1) / 8 + 1);
}

Msg prepare(const dbcppp::IMessage& m) {
    Msg out;
    out.msg = &m;
    std::vector<const dbcppp::ISignal*> all;
    for (const dbcppp::ISignal& s : m.Signals()) all.push_back(&s);
    auto index_of = [&](std::string_view name) -> int {
        for (size_t i = 0; i < all.size(); i++)
            if (all[i]->Name() == name) return int(i);
        return -1;
    };
    const dbcppp::ISignal* mux = m.MuxSignal();
    int mux_index = -1;
    for (size_t i = 0; i < all.size(); i++)
        if (all[i] == mux) mux_index = int(i);
    for (const dbcppp::ISignal* sp : all) {
        const dbcppp::ISignal& s = *sp;
        Sig g;
        g.sig = sp;
        std::string full = m.Name() + "." + s.Name();
        append_json_string(g.json_name, full);
        g.json_name += ",\"value\":";
        g.csv_name = csv_field(full) + ",";
        if (!s.Unit().empty()) {
            g.json_unit = ",\"unit\":";
            append_json_string(g.json_unit, s.Unit());
            g.csv_unit = csv_field(s.Unit());
        }
        auto evt = s.ExtendedValueType();
        g.is_signed = s.ValueType() == dbcppp::ISignal::EValueType::Signed;
        g.float32 = evt == dbcppp::ISignal::EExtendedValueType::Float;
        g.integral = evt == dbcppp::ISignal::EExtendedValueType::Integer && is_integer(s.Factor()) &&
                     is_integer(s.Offset());
        g.direct = g.integral && s.Factor() == 1 && s.Offset() == 0;
        if (!g.integral && evt == dbcppp::ISignal::EExtendedValueType::Integer) {
            int d = std::max(decimal_places(s.Factor()), decimal_places(s.Offset()));
            g.decimals = d <= 15 ? d : -1;
        }
        g.has_range = s.Minimum() < s.Maximum();
        g.minimum = s.Minimum();
        g.maximum = s.Maximum();
        g.min_bytes = bytes_needed(s);
        for (const dbcppp::IValueEncodingDescription& ved : s.ValueEncodingDescriptions()) {
            std::string j = ",\"label\":";
            append_json_string(j, ved.Description());
            g.labels.push_back({ved.Value(), {j, csv_field(ved.Description())}});
        }
        if (s.SignalMultiplexerValues_Size() > 0) {
            // Extended multiplexing (SG_MUL_VAL_): present while its switch is present and the
            // switch's raw value lies in one of the ranges.
            const dbcppp::ISignalMultiplexerValue& smv = s.SignalMultiplexerValues_Get(0);
            g.mux_switch = index_of(smv.SwitchName());
            for (const auto& r : smv.ValueRanges()) g.mux_ranges.push_back({r.from, r.to});
        } else if (s.MultiplexerIndicator() == dbcppp::ISignal::EMultiplexer::MuxValue) {
            g.mux_switch = mux_index;
            g.mux_ranges.push_back({s.MultiplexerSwitchValue(), s.MultiplexerSwitchValue()});
        }
        out.sigs.push_back(std::move(g));
    }
    return out;
}

bool load_bus(Bus& bus, const std::string& path) {
    std::ifstream is(path);
    if (!is) {
        std::fprintf(stderr, "dbcppp-decode: cannot open %s\n", path.c_str());
        return false;
    }
    auto net = dbcppp::INetwork::LoadDBCFromIs(is);
    if (!net) {
        std::fprintf(stderr, "dbcppp-decode: dbcppp could not parse %s\n", path.c_str());
        return false;
    }
    for (const dbcppp::IMessage& m : net->Messages()) bus.msgs.emplace(uint32_t(m.Id()), prepare(m));
    bus.nets.push_back(std::move(net));
    return true;
}

// The output: one large buffer, written with fwrite when it fills.
struct Out {
    static constexpr size_t size = 1 << 20;
    std::unique_ptr<char[]> buf{new char[size]};  // not zeroed: only written bytes are read
    size_t n = 0;
    FILE* f = stdout;
    void flush() {
        if (n) std::fwrite(buf.get(), 1, n, f);
        n = 0;
    }
    void reserve(size_t k) {
        if (n + k > size) flush();
    }
    void put(std::string_view s) {
        std::memcpy(buf.get() + n, s.data(), s.size());
        n += s.size();
    }
    void put(char c) { buf[n++] = c; }
    template <class T>
    void num(T v) {
        auto r = std::to_chars(buf.get() + n, buf.get() + size, v);
        n = size_t(r.ptr - buf.get());
    }
};

int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

struct Counts {
    uint64_t frames = 0, decoded_frames = 0, values = 0, unknown = 0, skipped = 0, no_dbc = 0;
};

// Writes the value (and the keys that follow it) of one decoded signal.
void put_value(Out& o, Format fmt, const Sig& g, uint64_t raw) {
    const std::pair<std::string, std::string>* label = nullptr;
    if (!g.labels.empty()) {
        int64_t key = int64_t(raw);
        for (const auto& l : g.labels)
            if (l.first == key) {
                label = &l.second;
                break;
            }
    }
    bool oor = false;
    const char* nonfinite = nullptr;
    if (g.integral) {
        if (g.direct) {
            if (g.is_signed) o.num(int64_t(raw)); else o.num(raw);
            if (g.has_range) {
                double v = g.is_signed ? double(int64_t(raw)) : double(raw);
                oor = v < g.minimum || v > g.maximum;
            }
        } else {
            double v = g.sig->RawToPhys(raw);
            o.num(int64_t(std::llround(v)));
            oor = g.has_range && (v < g.minimum || v > g.maximum);
        }
    } else {
        double v = g.sig->RawToPhys(raw);
        if (!std::isfinite(v)) {
            nonfinite = std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf");
            oor = !std::isnan(v) && g.has_range && (v < g.minimum || v > g.maximum);
            if (fmt == Format::JSON) o.put("null");
        } else {
            static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                         1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
            // As candec does, an integer signal's range is checked on the value as written, after
            // it is rounded (raw 7 x 0.1 is within a range that ends at 0.7); a float's before.
            if (g.decimals >= 0) v = std::round(v * p10[g.decimals]) / p10[g.decimals];
            oor = g.has_range && (v < g.minimum || v > g.maximum);
            size_t start = o.n;
            if (g.float32) o.num(float(v)); else o.num(v);
            bool has_mark = false;
            for (size_t i = start; i < o.n; i++)
                if (o.buf[i] == '.' || o.buf[i] == 'e') {
                    has_mark = true;
                    break;
                }
            if (!has_mark) o.put(".0");
        }
    }
    if (fmt == Format::JSON) {
        if (nonfinite) {
            o.put(",\"nonfinite\":\"");
            o.put(nonfinite);
            o.put('"');
        }
        o.put(g.json_unit);
        if (label) o.put(label->first);
        if (oor) o.put(",\"oor\":true");
        o.put("}\n");
    } else {
        o.put(',');
        if (nonfinite) o.put(nonfinite);
        o.put(',');
        o.put(g.csv_unit);
        o.put(',');
        if (label) o.put(label->second);
        o.put(',');
        if (oor) o.put("true");
        o.put('\n');
    }
}

size_t max_line(const Sig& g) {
    size_t n = g.json_name.size() + g.csv_name.size() + g.json_unit.size() + g.csv_unit.size() + 128;
    for (const auto& l : g.labels) n += l.second.first.size() + l.second.second.size();
    return n;
}

// Is signal i of the frame present (multiplexing)? raws holds the decoded raw values.
bool present(const Msg& m, size_t i, const std::vector<uint64_t>& raws, int depth = 0) {
    const Sig& g = m.sigs[i];
    if (g.mux_switch < 0) return true;
    if (depth > 16) return false;
    if (!present(m, size_t(g.mux_switch), raws, depth + 1)) return false;
    uint64_t sw = raws[size_t(g.mux_switch)];
    for (const auto& r : g.mux_ranges)
        if (sw >= r.first && sw <= r.second) return true;
    return false;
}

int usage() {
    std::fprintf(stderr,
                 "usage: dbcppp-decode [--format json|csv|none] [--stats] [-o FILE] --dbc [IFACE=]FILE ... CAPTURE\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Format fmt = Format::JSON;
    bool stats = false;
    const char* out_path = nullptr;
    const char* capture = nullptr;
    std::vector<std::pair<std::string, std::string>> dbcs;  // (iface or "", file)
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](const char* flag) -> const char* {
            std::string f = flag;
            if (a.rfind(f + "=", 0) == 0) return argv[i] + f.size() + 1;
            if (a == f && i + 1 < argc) return argv[++i];
            return nullptr;
        };
        if (const char* v = value("--format")) {
            std::string s = v;
            if (s == "json") fmt = Format::JSON;
            else if (s == "csv") fmt = Format::CSV;
            else if (s == "none") fmt = Format::None;
            else return usage();
        } else if (const char* v = value("--dbc")) {
            std::string s = v;
            auto eq = s.find('=');
            if (eq == std::string::npos) dbcs.push_back({"", s});
            else dbcs.push_back({s.substr(0, eq), s.substr(eq + 1)});
        } else if (const char* v = value("-o")) {
            out_path = v;
        } else if (a == "--stats") {
            stats = true;
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            return usage();
        } else if (!capture) {
            capture = argv[i];
        } else {
            return usage();
        }
    }
    if (!capture || dbcs.empty()) return usage();

    auto t0 = Clock::now();
    std::vector<std::unique_ptr<Bus>> buses;
    for (const auto& [iface, file] : dbcs) {
        Bus* bus = nullptr;
        for (auto& b : buses)
            if (b->name == iface) bus = b.get();
        if (!bus) {
            buses.push_back(std::make_unique<Bus>());
            bus = buses.back().get();
            bus->name = iface;
        }
        if (!load_bus(*bus, file)) return 1;
    }
    size_t longest = 0;
    for (auto& b : buses)
        for (auto& [id, m] : b->msgs)
            for (auto& g : m.sigs) longest = std::max(longest, max_line(g));

    auto t1 = Clock::now();
    int fd = std::strcmp(capture, "-") == 0 ? 0 : open(capture, O_RDONLY);
    if (fd < 0) {
        std::fprintf(stderr, "dbcppp-decode: cannot open %s\n", capture);
        return 1;
    }

    Out o;
    if (out_path && std::strcmp(out_path, "-") != 0) {
        o.f = std::fopen(out_path, "wb");
        if (!o.f) {
            std::fprintf(stderr, "dbcppp-decode: cannot create %s\n", out_path);
            return 1;
        }
    }
    if (fmt == Format::CSV) o.put("t,ts,bus,id,signal,value,nonfinite,unit,label,oor\n");

    Counts c;
    std::vector<uint64_t> raws;
    std::string prefix;  // this frame's line up to the signal
    const Bus* last_bus = nullptr;
    std::string last_iface;  // a copy: the line it came from is overwritten by the next read
    alignas(8) uint8_t payload[72];
    // Handles one capture line: (1436509052.249713) can0 123#DEADBEEF
    auto handle = [&](std::string_view line) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() < 4 || line[0] != '(') {
            if (!line.empty()) c.skipped++;
            return;
        }
        size_t close_paren = line.find(')');
        if (close_paren == std::string_view::npos) { c.skipped++; return; }
        std::string_view t = line.substr(1, close_paren - 1);
        size_t i = close_paren + 1;
        while (i < line.size() && line[i] == ' ') i++;
        size_t iface_end = line.find(' ', i);
        if (iface_end == std::string_view::npos) { c.skipped++; return; }
        std::string_view iface = line.substr(i, iface_end - i);
        std::string_view frame = line.substr(iface_end + 1);
        size_t hash = frame.find('#');
        if (hash == std::string_view::npos) { c.skipped++; return; }
        c.frames++;
        std::string_view idtext = frame.substr(0, hash);
        uint32_t id = 0;
        for (char ch : idtext) id = id << 4 | uint32_t(hexval(ch));
        bool extended = idtext.size() > 3;
        if (extended && (id & 0x20000000u)) return;  // error frame
        std::string_view rest = frame.substr(hash + 1);
        if (!rest.empty() && (rest[0] == 'R' || rest[0] == 'r')) return;  // remote frame
        if (!rest.empty() && rest[0] == '#') rest = rest.substr(std::min<size_t>(2, rest.size()));  // CAN FD: ##<flags><data>

        const Bus* bus = last_bus;
        if (!bus || iface != last_iface) {
            bus = nullptr;
            for (auto& b : buses)
                if (b->name == iface) bus = b.get();
            if (!bus)
                for (auto& b : buses)
                    if (b->name.empty()) bus = b.get();
            last_bus = bus;
            last_iface.assign(iface);
        }
        if (!bus) { c.no_dbc++; return; }
        uint32_t key = extended ? ((id & 0x1FFFFFFFu) | 0x80000000u) : id;
        auto it = bus->msgs.find(key);
        if (it == bus->msgs.end()) { c.unknown++; return; }
        const Msg& m = it->second;

        unsigned dlc = unsigned(rest.size() / 2);
        if (dlc > 64) dlc = 64;
        std::memset(payload, 0, sizeof payload);
        for (unsigned k = 0; k < dlc; k++) payload[k] = uint8_t(hexval(rest[2 * k]) << 4 | hexval(rest[2 * k + 1]));

        c.decoded_frames++;
        raws.resize(m.sigs.size());
        for (size_t k = 0; k < m.sigs.size(); k++) raws[k] = m.sigs[k].sig->Decode(payload);
        if (fmt == Format::None) {
            for (size_t k = 0; k < m.sigs.size(); k++) {
                const Sig& g = m.sigs[k];
                if (g.min_bytes > dlc || !present(m, k, raws)) continue;
                volatile double v = g.sig->RawToPhys(raws[k]);
                (void)v;
                c.values++;
            }
            return;
        }

        // The frame's part of every line, written once.
        prefix.clear();
        uint64_t sec = 0, usec = 0;
        size_t dot = t.find('.');
        for (char ch : t.substr(0, dot)) sec = sec * 10 + uint64_t(ch - '0');
        int ndec = 0;
        if (dot != std::string_view::npos)
            for (char ch : t.substr(dot + 1)) {
                if (ndec++ < 9) usec = usec * 10 + uint64_t(ch - '0');
            }
        uint64_t ns = usec;
        for (int k = ndec; k < 9; k++) ns *= 10;
        char num[32];
        if (fmt == Format::JSON) {
            prefix += "{\"t\":";
            prefix += t;
            prefix += ",\"ts\":";
            prefix.append(num, std::to_chars(num, num + sizeof num, sec * 1000000000ull + ns).ptr);
            prefix += ",\"bus\":";
            append_json_string(prefix, iface);
            prefix += ",\"id\":";
            prefix.append(num, std::to_chars(num, num + sizeof num, id & 0x1FFFFFFFu).ptr);
            prefix += ",\"signal\":";
        } else {
            prefix += t;
            prefix += ',';
            prefix.append(num, std::to_chars(num, num + sizeof num, sec * 1000000000ull + ns).ptr);
            prefix += ',';
            prefix += csv_field(iface);
            prefix += ',';
            prefix.append(num, std::to_chars(num, num + sizeof num, id & 0x1FFFFFFFu).ptr);
            prefix += ',';
        }
        for (size_t k = 0; k < m.sigs.size(); k++) {
            const Sig& g = m.sigs[k];
            if (g.min_bytes > dlc || !present(m, k, raws)) continue;
            o.reserve(prefix.size() + longest);
            o.put(prefix);
            o.put(fmt == Format::JSON ? std::string_view(g.json_name) : std::string_view(g.csv_name));
            put_value(o, fmt, g, raws[k]);
            c.values++;
        }
    };

    // The capture is read in blocks into one buffer; a line cut by the end of a block is moved to
    // the front of the buffer and completed by the next read.
    size_t cap = 1 << 20;
    std::unique_ptr<char[]> in(new char[cap]);
    size_t have = 0;
    Clock::duration reading{};
    for (;;) {
        if (have == cap) {  // a line longer than the buffer
            std::unique_ptr<char[]> bigger(new char[cap * 2]);
            std::memcpy(bigger.get(), in.get(), have);
            in = std::move(bigger);
            cap *= 2;
        }
        auto r0 = Clock::now();
        ssize_t k = read(fd, in.get() + have, cap - have);
        reading += Clock::now() - r0;
        if (k < 0) {
            std::fprintf(stderr, "dbcppp-decode: reading %s: %s\n", capture, std::strerror(errno));
            return 1;
        }
        const char* p = in.get();
        const char* end = p + have + size_t(k);
        for (;;) {
            const char* eol = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
            if (!eol) break;
            handle(std::string_view(p, size_t(eol - p)));
            p = eol + 1;
        }
        have = size_t(end - p);
        if (k == 0) {
            if (have) handle(std::string_view(p, have));  // a last line without a newline
            break;
        }
        std::memmove(in.get(), p, have);
    }
    if (fd != 0) close(fd);
    o.flush();
    if (o.f != stdout) std::fclose(o.f);
    auto t3 = Clock::now();
    if (stats) {
        std::fprintf(stderr,
                     "dbcppp-decode: dbc load %.3f s, read() %.3f s, parse+decode+write %.3f s; "
                     "%llu frames (%llu decoded, %llu unknown ID, %llu without a DBC), %llu values\n",
                     seconds(t1 - t0), seconds(reading), seconds(t3 - t1 - reading), (unsigned long long)c.frames,
                     (unsigned long long)c.decoded_frames, (unsigned long long)c.unknown,
                     (unsigned long long)c.no_dbc, (unsigned long long)c.values);
    }
    return 0;
}
