#include "check.hpp"
#include "geom/polygon.hpp"

using geom::Polygon;
using geom::Vec2;

static const Polygon kSquare = {{0, 0}, {4, 0}, {4, 4}, {0, 4}};
static const Polygon kArrow = {{0, 0}, {4, 2}, {0, 4}, {1, 2}};

TEST_CASE(area_square, "polygon.area_square") {
    CHECK_NEAR(geom::signed_area(kSquare), 16.0);
    CHECK_NEAR(geom::area(kArrow), 6.0);
}

TEST_CASE(area_clockwise, "polygon.area_clockwise") {
    Polygon cw(kSquare.rbegin(), kSquare.rend());
    CHECK_NEAR(geom::signed_area(cw), -16.0);
    CHECK_NEAR(geom::area(cw), 16.0);
}

TEST_CASE(perimeter, "polygon.perimeter") {
    CHECK_NEAR(geom::perimeter(kSquare), 16.0);
    CHECK_NEAR(geom::perimeter({{0, 0}, {3, 0}, {0, 4}}), 12.0);
}

TEST_CASE(centroid, "polygon.centroid") {
    CHECK(geom::centroid(kSquare) == (Vec2{2, 2}));
    CHECK(geom::centroid({{0, 0}, {6, 0}, {0, 3}}) == (Vec2{2, 1}));
}

TEST_CASE(contains_inside, "polygon.contains_inside") {
    CHECK(geom::contains(kSquare, {1, 3}));
    CHECK(geom::contains(kSquare, {4, 2}));
    CHECK(geom::contains(kArrow, {2, 2}));
}

TEST_CASE(contains_outside, "polygon.contains_outside") {
    CHECK(!geom::contains(kSquare, {5, 1}));
    CHECK(!geom::contains(kArrow, {0.5, 2}));
    CHECK(!geom::contains(kSquare, {-1, -1}));
}

TEST_CASE(bounding_box, "polygon.bounding_box") {
    geom::Box box = geom::bounding_box(kArrow);
    CHECK(box.min == (Vec2{0, 0}));
    CHECK(box.max == (Vec2{4, 4}));
    CHECK_THROWS(geom::bounding_box({}));
}

TEST_CASE(is_convex, "polygon.is_convex") {
    CHECK(geom::is_convex(kSquare));
    CHECK(!geom::is_convex(kArrow));
    CHECK(!geom::is_convex({{0, 0}, {1, 1}}));
}

TEST_CASE(degenerate, "polygon.degenerate") {
    CHECK_THROWS(geom::centroid({{0, 0}, {1, 1}, {2, 2}}));
    CHECK_NEAR(geom::area({{0, 0}, {1, 1}, {2, 2}}), 0.0);
}
