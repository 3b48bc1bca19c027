#include "compiler/program.h"

#include <algorithm>
#include <sstream>

#include "autodiff/primitive.h"

namespace jetpde::compiler {
namespace {

std::string view_text(const View& v) {
  std::ostringstream os;
  os << "b" << v.buffer;
  if (v.row0 || v.col0) os << "@" << v.row0 << "," << v.col0;
  os << v.shape.str();
  if (v.row_broadcast) os << "^r";
  if (v.col_broadcast) os << "^c";
  return os.str();
}

const char* kind_name(Buffer::Kind k) {
  switch (k) {
    case Buffer::Kind::Input:
      return "input";
    case Buffer::Kind::Param:
      return "param";
    case Buffer::Kind::Constant:
      return "const";
    case Buffer::Kind::Temp:
      return "temp";
  }
  return "?";
}

void kernel_text(std::ostringstream& os, const Kernel& k) {
  os << "kernel " << k.domain.str() << "\n";
  for (std::size_t i = 0; i < k.values.size(); ++i) {
    const Value& v = k.values[i];
    os << "    v" << i << " = ";
    if (v.kind == Value::Kind::Load)
      os << "load " << view_text(k.loads[static_cast<std::size_t>(v.load)]);
    else if (v.kind == Value::Kind::Literal)
      os << "literal " << v.real;
    else {
      os << op_name(v.op);
      for (int a : v.args) os << " v" << a;
      if (v.op == Op::PowC) os << " ^" << v.real;
    }
    os << "\n";
  }
  for (const auto& s : k.stores)
    os << "    store v" << s.value << " -> " << view_text(s.target) << "\n";
  for (const auto& r : k.reductions)
    os << "    " << (r.mean ? "mean" : "sum") << (r.over_rows ? "_rows" : "_cols") << " v"
       << r.value << " -> " << view_text(r.target) << "\n";
}

}  // namespace

std::string Program::to_text() const {
  std::ostringstream os;
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    const Buffer& buf = buffers[b];
    os << "b" << b << ": " << kind_name(buf.kind) << " " << dtype_name(buf.dtype)
       << (buf.packed ? " packed" : "") << buf.shape.str();
    if (!buf.name.empty()) os << " '" << buf.name << "'";
    if (buf.offset >= 0) os << " @" << buf.offset;
    if (buf.scratch_only) os << " @scratch";
    os << "\n";
  }
  for (std::size_t s = 0; s < steps.size(); ++s) {
    os << s << ": ";
    if (const auto* k = std::get_if<Kernel>(&steps[s].op)) {
      kernel_text(os, *k);
    } else {
      const Gemm& g = std::get<Gemm>(steps[s].op);
      os << "gemm " << view_text(g.c) << " = " << view_text(g.a) << (g.transpose_a ? "'" : "")
         << " @ " << view_text(g.b) << (g.transpose_b ? "'" : "") << "\n";
    }
  }
  for (const TiledRegion& r : regions) {
    os << "tiled steps " << r.first << ".." << r.last - 1 << ": " << r.points << " points, ";
    if (r.tune)
      os << "tiles to be measured\n";
    else if (r.tile == 0)
      os << "run whole (tiles measured slower)\n";
    else
      os << "tiles of " << r.tile << (r.sums_whole ? ", weight gradients whole after them" : "")
         << (r.threads > 0 ? ", on " + std::to_string(r.threads) + " threads" : "") << "\n";
    if (!r.locals.empty()) {
      os << "  " << r.locals.size() << " locals:";
      for (const TiledRegion::Local& l : r.locals)
        os << " b" << l.buffer << (l.summed ? "'" : "") << " (steps " << l.first << ".." << l.last
           << ")";
      os << "\n";
    }
  }
  os << "outputs:";
  for (const View& v : outputs) os << " " << view_text(v);
  os << "\narena: " << arena_bytes << " bytes, peak live " << peak_live_bytes << " bytes\n";
  return os.str();
}

}  // namespace jetpde::compiler

namespace jetpde::compiler {

const TiledRegion* tiled_region_of(const Program& p, std::size_t step) {
  for (const TiledRegion& r : p.regions)
    if (static_cast<int>(step) >= r.first && static_cast<int>(step) < r.last) return &r;
  return nullptr;
}

bool can_run_whole(const Program& p, std::size_t step) {
  const TiledRegion* r = tiled_region_of(p, step);
  return !r || !runs_in_tiles_only(p, *r);
}

bool runs_in_tiles_only(const Program& p, const TiledRegion& r) {
  return std::any_of(r.locals.begin(), r.locals.end(), [&](const TiledRegion::Local& l) {
    return p.buffers[static_cast<std::size_t>(l.buffer)].scratch_only;
  });
}

int pack_bf16_gemm_operands(Program& program) {
  const auto is_bf16 = [&](const View& v) {
    return program.buffers[static_cast<std::size_t>(v.buffer)].dtype == DType::bf16;
  };
  std::vector<bool> packable(program.buffers.size());
  for (std::size_t b = 0; b < program.buffers.size(); ++b)
    packable[b] = program.buffers[b].dtype == DType::bf16;
  for (const Step& step : program.steps)
    if (const auto* g = std::get_if<Gemm>(&step.op)) {
      // The dimensions other than the points: inner and output widths, or a weight gradient's
      // output.
      const std::int64_t width =
          g->transpose_a
              ? std::min(g->c.shape.rows, g->c.shape.cols)
              : std::min(g->transpose_b ? g->b.shape.cols : g->b.shape.rows, g->c.shape.cols);
      const bool both = is_bf16(g->a) && is_bf16(g->b) && width >= kNativeBf16MinWidth;
      if (!both) packable[static_cast<std::size_t>(g->a.buffer)] = false;
      if (!both) packable[static_cast<std::size_t>(g->b.buffer)] = false;
      packable[static_cast<std::size_t>(g->c.buffer)] = false;  // GEMMs write f32
    }
  int packed = 0;
  for (std::size_t b = 0; b < program.buffers.size(); ++b)
    if (packable[b]) {
      program.buffers[b].packed = true;
      ++packed;
    }
  return packed;
}

}  // namespace jetpde::compiler
