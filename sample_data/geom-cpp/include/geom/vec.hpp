#pragma once

#include <cmath>

namespace geom {

/// A point or displacement in the plane.
struct Vec2 {
    double x = 0.0;
    double y = 0.0;
};

constexpr double kEpsilon = 1e-9;

Vec2 operator+(Vec2 a, Vec2 b);
Vec2 operator-(Vec2 a, Vec2 b);
Vec2 operator*(Vec2 a, double k);
bool operator==(Vec2 a, Vec2 b);

double dot(Vec2 a, Vec2 b);
/// The z component of the 3-D cross product: > 0 when b is counter-clockwise from a.
double cross(Vec2 a, Vec2 b);
double length(Vec2 v);
double distance(Vec2 a, Vec2 b);
/// v scaled to unit length; the zero vector stays zero.
Vec2 normalize(Vec2 v);
Vec2 rotate90(Vec2 v);

/// Orientation of the turn a -> b -> c: 1 left, -1 right, 0 straight.
int orientation(Vec2 a, Vec2 b, Vec2 c);
/// Whether closed segments [p1, p2] and [q1, q2] share at least one point.
bool segments_intersect(Vec2 p1, Vec2 p2, Vec2 q1, Vec2 q2);

}  // namespace geom
