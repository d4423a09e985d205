#include "check.hpp"
#include "geom/polygon.hpp"

using geom::Polygon;
using geom::Vec2;

TEST_CASE(square_with_inner, "hull.square_with_inner") {
    Polygon hull = geom::convex_hull({{0, 0}, {2, 2}, {4, 0}, {1, 1}, {4, 4}, {0, 4}, {3, 1}});
    CHECK(hull.size() == 4);
    CHECK_NEAR(geom::area(hull), 16.0);
}

TEST_CASE(collinear_points, "hull.collinear_points") {
    Polygon hull = geom::convex_hull({{0, 0}, {1, 0}, {2, 0}, {2, 2}, {0, 2}, {1, 2}});
    CHECK(hull.size() == 4);
}

TEST_CASE(few_points, "hull.few_points") {
    CHECK(geom::convex_hull({{1, 1}, {1, 1}}).size() == 1);
    CHECK(geom::convex_hull({{0, 0}, {3, 1}}).size() == 2);
    CHECK(geom::convex_hull({}).empty());
}

TEST_CASE(order_ccw, "hull.order_ccw") {
    Polygon hull = geom::convex_hull({{4, 4}, {0, 0}, {4, 0}, {0, 4}});
    CHECK(geom::signed_area(hull) > 0);
    CHECK(hull.front() == (Vec2{0, 0}));
    CHECK(geom::is_convex(hull));
}

TEST_CASE(inside_box, "clip.inside_box") {
    auto kept = geom::clip_to_box({{1, 1}, {5, 5}, {2, 3}, {0, 0}}, {{0, 0}, {3, 3}});
    CHECK(kept.size() == 3);
}

TEST_CASE(outside_box, "clip.outside_box") {
    CHECK(geom::clip_to_box({{4, 1}, {-1, 2}}, {{0, 0}, {3, 3}}).empty());
}
