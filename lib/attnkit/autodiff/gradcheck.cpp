#include "attnkit/autodiff/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include "attnkit/core/error.h"

namespace attnkit::ad {

GradCheckResult check_gradients(const std::function<Var(Tape&)>& f,
                                const std::vector<Parameter*>& params,
                                const GradCheckOptions& opt) {
  Tape t(opt.seed);
  auto eval = [&](Tensor* dir) {
    t.clear();
    t.seed(opt.seed);
    Var y = f(t);
    const Tensor& v = y.value();
    if (dir && dir->size() == 0) {  // first call: draw the direction
      Rng rng(opt.seed ^ 0x9E3779B97F4A7C15ull);
      *dir = Tensor(v.shape());
      for (int64_t i = 0; i < dir->size(); ++i) (*dir)[i] = static_cast<float>(rng.normal());
    }
    return y;
  };
  Tensor dir(Shape{0});
  for (Parameter* p : params) std::fill(p->grad.values().begin(), p->grad.values().end(), 0.0f);
  Var y = eval(&dir);
  t.backward(y, dir);
  std::vector<Tensor> analytic;
  for (Parameter* p : params) analytic.push_back(p->grad.clone());
  auto loss = [&]() {
    Var yy = eval(nullptr);
    const Tensor& v = yy.value();
    if (v.shape() != dir.shape())
      throw ShapeError("check_gradients: output shape changed from " + shape_str(dir.shape()) +
                       " to " + shape_str(v.shape()));
    double s = 0.0;
    for (int64_t i = 0; i < v.size(); ++i) s += static_cast<double>(dir[i]) * v[i];
    return s;
  };
  GradCheckResult res;
  for (size_t k = 0; k < params.size(); ++k) {
    Parameter& p = *params[k];
    const int64_t n = p.value.size();
    const int64_t step =
        opt.max_per_tensor > 0 && n > opt.max_per_tensor ? n / opt.max_per_tensor : 1;
    for (int64_t i = 0; i < n; i += step) {
      const float v = p.value[i];
      const float up = static_cast<float>(v + opt.eps), dn = static_cast<float>(v - opt.eps);
      p.value[i] = up;
      const double lp = loss();
      p.value[i] = dn;
      const double lm = loss();
      p.value[i] = v;
      const double num = (lp - lm) / (static_cast<double>(up) - dn);
      const double a = analytic[k][i];
      const double bound = opt.atol + opt.rtol * std::max(std::fabs(a), std::fabs(num));
      const double ratio = std::fabs(a - num) / bound;
      ++res.checked;
      if (!(ratio <= res.worst) || res.where.empty()) {
        if (!(ratio <= res.worst)) res.worst = std::isnan(ratio) ? INFINITY : ratio;
        std::ostringstream s;
        s << p.name << "[" << i << "]: analytic " << a << ", numeric " << num;
        res.where = s.str();
      }
    }
  }
  res.ok = res.worst <= 1.0;
  t.clear();
  return res;
}

GradCheckResult check_gradients(const std::function<Var(Tape&, const std::vector<Var>&)>& f,
                                const std::vector<Tensor>& inputs, const GradCheckOptions& opt) {
  std::vector<std::unique_ptr<Parameter>> ps;
  std::vector<Parameter*> raw;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ps.push_back(std::make_unique<Parameter>("input" + std::to_string(i), inputs[i].clone()));
    raw.push_back(ps.back().get());
  }
  return check_gradients(
      [&](Tape& t) {
        std::vector<Var> vs;
        for (auto& p : ps) vs.push_back(t.param(*p));
        return f(t, vs);
      },
      raw, opt);
}

}  // namespace attnkit::ad
