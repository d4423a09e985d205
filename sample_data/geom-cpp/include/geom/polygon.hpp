#pragma once

#include <vector>

#include "geom/vec.hpp"

namespace geom {

using Polygon = std::vector<Vec2>;

struct Box {
    Vec2 min;
    Vec2 max;
};

/// Signed area: positive for counter-clockwise vertex order.
double signed_area(const Polygon& poly);
double area(const Polygon& poly);
double perimeter(const Polygon& poly);
Vec2 centroid(const Polygon& poly);
/// Even-odd rule; points on the boundary count as inside.
bool contains(const Polygon& poly, Vec2 p);
Box bounding_box(const Polygon& poly);
bool is_convex(const Polygon& poly);

/// The convex hull in counter-clockwise order, without collinear points.
Polygon convex_hull(std::vector<Vec2> points);
/// The points of `points` that lie inside `box` (edges included).
std::vector<Vec2> clip_to_box(const std::vector<Vec2>& points, Box box);

}  // namespace geom
