#include "geom/vec.hpp"

#include <algorithm>

namespace geom {

Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }

Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }

Vec2 operator*(Vec2 a, double k) { return {a.x * k, a.y * k}; }

bool operator==(Vec2 a, Vec2 b) {
    return std::fabs(a.x - b.x) < kEpsilon && std::fabs(a.y - b.y) < kEpsilon;
}

double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }

double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }

double length(Vec2 v) { return std::sqrt(dot(v, v)); }

double distance(Vec2 a, Vec2 b) { return length(b - a); }

Vec2 normalize(Vec2 v) {
    double len = length(v);
    if (len < kEpsilon) {
        return {0.0, 0.0};
    }
    return v * (1.0 / len);
}

Vec2 rotate90(Vec2 v) { return {-v.y, v.x}; }

int orientation(Vec2 a, Vec2 b, Vec2 c) {
    double turn = cross(b - a, c - a);
    if (turn > kEpsilon) {
        return 1;
    }
    if (turn < -kEpsilon) {
        return -1;
    }
    return 0;
}

static bool on_segment(Vec2 p, Vec2 q, Vec2 r) {
    return q.x <= std::max(p.x, r.x) + kEpsilon && q.x >= std::min(p.x, r.x) - kEpsilon &&
           q.y <= std::max(p.y, r.y) + kEpsilon && q.y >= std::min(p.y, r.y) - kEpsilon;
}

bool segments_intersect(Vec2 p1, Vec2 p2, Vec2 q1, Vec2 q2) {
    int o1 = orientation(p1, p2, q1);
    int o2 = orientation(p1, p2, q2);
    int o3 = orientation(q1, q2, p1);
    int o4 = orientation(q1, q2, p2);
    if (o1 != o2 && o3 != o4) {
        return true;
    }
    if (o1 == 0 && on_segment(p1, q1, p2)) return true;
    if (o2 == 0 && on_segment(p1, q2, p2)) return true;
    if (o3 == 0 && on_segment(q1, p1, q2)) return true;
    if (o4 == 0 && on_segment(q1, p2, q2)) return true;
    return false;
}

}  // namespace geom
