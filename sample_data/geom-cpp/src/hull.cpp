#include <algorithm>

#include "geom/polygon.hpp"

namespace geom {

// Andrew's monotone chain: sort, then build the lower and upper chains.
Polygon convex_hull(std::vector<Vec2> points) {
    std::sort(points.begin(), points.end(), [](Vec2 a, Vec2 b) {
        return a.x < b.x || (a.x == b.x && a.y < b.y);
    });
    points.erase(std::unique(points.begin(), points.end()), points.end());
    if (points.size() < 3) {
        return points;
    }
    Polygon hull(2 * points.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        while (k >= 2 && orientation(hull[k - 2], hull[k - 1], points[i]) <= 0) {
            --k;
        }
        hull[k++] = points[i];
    }
    for (std::size_t i = points.size() - 1, lower = k + 1; i > 0; --i) {
        while (k >= lower && orientation(hull[k - 2], hull[k - 1], points[i - 1]) <= 0) {
            --k;
        }
        hull[k++] = points[i - 1];
    }
    hull.resize(k - 1);
    return hull;
}

std::vector<Vec2> clip_to_box(const std::vector<Vec2>& points, Box box) {
    std::vector<Vec2> kept;
    for (const Vec2& p : points) {
        if (p.x >= box.min.x && p.x <= box.max.x && p.y >= box.min.y && p.y <= box.max.y) {
            kept.push_back(p);
        }
    }
    return kept;
}

}  // namespace geom
