#include "geom/polygon.hpp"

#include <algorithm>
#include <stdexcept>

namespace geom {

double signed_area(const Polygon& poly) {
    double twice = 0.0;
    for (std::size_t i = 0; i < poly.size(); ++i) {
        const Vec2& a = poly[i];
        const Vec2& b = poly[(i + 1) % poly.size()];
        twice += cross(a, b);
    }
    return twice / 2.0;
}

double area(const Polygon& poly) { return std::fabs(signed_area(poly)); }

double perimeter(const Polygon& poly) {
    double total = 0.0;
    for (std::size_t i = 0; i < poly.size(); ++i) {
        total += distance(poly[i], poly[(i + 1) % poly.size()]);
    }
    return total;
}

Vec2 centroid(const Polygon& poly) {
    double a = signed_area(poly);
    if (std::fabs(a) < kEpsilon) {
        throw std::invalid_argument("degenerate polygon has no centroid");
    }
    double cx = 0.0;
    double cy = 0.0;
    for (std::size_t i = 0; i < poly.size(); ++i) {
        const Vec2& p = poly[i];
        const Vec2& q = poly[(i + 1) % poly.size()];
        double f = cross(p, q);
        cx += (p.x + q.x) * f;
        cy += (p.y + q.y) * f;
    }
    return {cx / (6.0 * a), cy / (6.0 * a)};
}

bool contains(const Polygon& poly, Vec2 p) {
    bool inside = false;
    for (std::size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
        const Vec2& a = poly[i];
        const Vec2& b = poly[j];
        if (orientation(a, b, p) == 0 && segments_intersect(a, b, p, p)) {
            return true;
        }
        bool crosses = (a.y > p.y) != (b.y > p.y);
        if (crosses && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) {
            inside = !inside;
        }
    }
    return inside;
}

Box bounding_box(const Polygon& poly) {
    if (poly.empty()) {
        throw std::invalid_argument("empty polygon");
    }
    Box box{poly[0], poly[0]};
    for (const Vec2& v : poly) {
        box.min.x = std::min(box.min.x, v.x);
        box.min.y = std::min(box.min.y, v.y);
        box.max.x = std::max(box.max.x, v.x);
        box.max.y = std::max(box.max.y, v.y);
    }
    return box;
}

bool is_convex(const Polygon& poly) {
    if (poly.size() < 3) {
        return false;
    }
    int sign = 0;
    for (std::size_t i = 0; i < poly.size(); ++i) {
        int o = orientation(poly[i], poly[(i + 1) % poly.size()], poly[(i + 2) % poly.size()]);
        if (o == 0) {
            continue;
        }
        if (sign == 0) {
            sign = o;
        } else if (o != sign) {
            return false;
        }
    }
    return sign != 0;
}

}  // namespace geom
